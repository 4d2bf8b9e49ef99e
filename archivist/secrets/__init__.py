"""Secrets: mask high-confidence secrets in text before it is stored or indexed.

Agent logs hold pasted API keys, tokens and ``.env`` contents. ``mask(text)``
returns the text with each secret replaced by a marker that names its kind and
keeps no character of the secret, ``[secret masked: github-token]``, and how
many were masked. The indexer stores, indexes and embeds only the masked text;
the source files are never touched. Masking masked text changes nothing.

An archive masks with a ``Masker`` that holds its key (``workspace.secret_key``):
each marker then carries a tag, ``[secret masked: github-token #3fa91c]``, a
digest of the secret keyed by that key, so that the same secret gets the same
marker wherever it appears and a reader can still follow a session. The key
lives beside the archive, never in it: whoever reads the archive (its SQL, its
pages, its tools) cannot test a guessed password against a tag.

What is masked, and by what:

* **Token formats** (those of Yelp's detect-secrets plugins, written here:
  its patterns backtrack, a line of 300 KB of ``eyJ`` took its JWT pattern 15 s,
  and run over whole lines): AWS access key ids (standing alone, not inside a
  longer run of base64; a path's ``/`` beside one, ``src/AKIA…/x.py``, is no part of
  such a run), GitHub tokens (``ghp_ gho_ ghu_ ghs_ ghr_``), Slack
  tokens and webhook URLs, Stripe live keys, JWTs (only formally valid ones:
  header and payload decode to JSON), GitLab, npm registry, PyPI, SendGrid,
  Square and Azure storage keys. A match is widened to the end of its token,
  because several formats are a fixed-length prefix of tokens that are longer
  today (Stripe and ``sk-proj-`` keys, a JWT's signature). A token may start
  right after a line break or a tab escaped in JSON text, whose ``n`` or ``t``
  is no letter of a word before it (``"the key:\\nhf_…"``).
* **Keys split across a line break**: a token cut short at the end of a line
  that goes on at the start of the next, as a terminal or an editor wraps it (a
  real line break, or ``\n`` escaped in JSON), is read joined, and masked in
  both parts. A token whole at the end of its line (``sk-`` and 32 characters
  is a key's shape, and a longer key's start) goes on only into what completes
  a key: a line that starts with eight or more of a key's characters, mixing
  upper case, lower case and digits; a word there is left alone.
* **Base64 that decodes to a secret**: a run of base64 that decodes to text in
  which a secret is found (``echo QVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPS4uLg== | base64
  -d``, a credentials file pasted encoded) is masked whole, as ``base64-<kind>``.
* **More expressions**, for what detect-secrets does not cover or covers
  partly: private key blocks from ``-----BEGIN ... PRIVATE KEY-----``
  through ``END`` across lines, also JSON-escaped or cut short (it flags the
  header line only); GitHub fine-grained tokens (``github_pat_``); OpenAI keys
  without the marker (``sk-``, ``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``);
  Anthropic keys (``sk-ant-``) and Hugging Face tokens (``hf_``), also after a
  hyphen, as in a name (``ledger-hf_…``); Google API keys (``AIza``); AWS secret
  keys and session tokens assigned to their names, quoted or not
  (``~/.aws/credentials``, ``.env``, ``aws sts`` JSON output; its own pattern
  wants quotes and the word aws nearby); bearer, token and basic credentials
  in ``Authorization`` headers; the password of a URL
  (``scheme://user:password@host``: only the password is masked; its basic-auth
  plugin misses passwords holding ``!$&*`` and other characters a URL allows);
  and assignments whose name says secret (``DB_PASSWORD=...``, ``export
  NPM_TOKEN=...``, ``"apiKey": "..."``, ``client_secret: '...'``,
  ``--password=...``), where only the value is masked. Its keyword plugin does
  this with far more false positives.

A masked span that several detectors found is counted once, and named by the
most specific: ``OPENAI_API_KEY=sk-proj-...`` is one ``openai-api-key``.

Never masked: prose, code identifiers, git SHAs, sha256 and other hex digests,
UUIDs, URLs without a password, code that reads a secret (``os.environ[...]``,
``settings.SECRET_KEY``, ``f"Bearer {token}"``, ``process.env.API_KEY``),
placeholders (``sk-...``, ``<your-key>``, ``xxxx``, ``changeme``, ``${TOKEN}``,
``$OPENAI_API_KEY``, ``{{ secrets.TOKEN }}``, AWS's documented ``...EXAMPLE``
keys), and, after a name or in a header, values shorter than six characters,
numbers, versions, paths and words: such a value must hold a digit or a symbol,
or be long and switch case often, as generated keys and chosen passwords do.

Why not a scanner as a library: detect-secrets, the widely used pure-Python
scanner, was used so until its patterns stalled on hostile lines (above); its
formats are kept. The alternatives looked at cover less: Microsoft's
``microsoft-security-utilities-secret-masker`` (beta) knows Azure key formats
but none of AWS, GitHub, OpenAI, Anthropic, Slack or Stripe; ``ggshield`` needs
GitGuardian's service; ``trufflehog3`` and ``whispers`` scan repositories from
the command line; ``presidio`` and ``llm-guard`` bring spaCy or transformers.

Speed: this runs on every message and every workspace document at index time.
One Aho-Corasick pass (``_Hits``, ahocorasick-rs) finds where every anchor of
every detector stands: the literal start of each token format, the words that
name a secret, ``://``, ``PRIVATE KEY``, ``Authorization``, and the base64 forms
of what a secret's text holds. A detector runs only where its anchors are, a
pattern matched at each one, and each stretch of text is read once (a match, or
a value, covers the anchors inside it), so text that cannot hold a secret costs
that one pass, about 250 MB/s on the markdown of ``../shared/eval``
(``bench/mask_speed.py``), and a hostile line of nothing but anchors costs time
in proportion to its length. Lengths are bounded so that a long run of base64
costs no more than a scan.

The modules: ``formats`` (token formats), ``context`` (private keys, ``Authorization``
headers, URL passwords, assignments), ``wrapped`` (keys split across lines), ``detect``
(each detector where its anchors stand, and base64 read again), ``anchors`` (the one
pass), ``values`` (what a secret's value must not look like) and ``spans`` (what a
detector finds).
"""

from __future__ import annotations

import hmac
import re
from typing import Any

from archivist.secrets.detect import _detect
from archivist.secrets.formats import _mangled
from archivist.secrets.spans import _Span
from archivist.texts import valid

MARKER = "[secret masked: {kind}]"
TAGGED_MARKER = "[secret masked: {kind} #{tag}]"
TAG_CHARS = 6  # hex digits of a secret's keyed digest in its marker: 24 bits, unique enough in one archive
_UNWRAPPED = re.compile(r"\r|\n|\\r|\\n")  # what a wrapped secret holds that the secret does not
# Bump when what is masked changes: sources are then stored again, masked the new way.
RULES_VERSION = 3


def marker(kind: str, tag: str | None = None) -> str:
    """The text that replaces one secret of ``kind`` (with its tag, under a key)."""
    return MARKER.format(kind=kind) if tag is None else TAGGED_MARKER.format(kind=kind, tag=tag)


class Masker:
    """Masks texts for one archive: each secret becomes a marker that names its kind and, with
    a key, a tag that the same secret always gets (a keyed digest: ``TAGGED_MARKER``).

    ``count`` adds up the secrets masked by ``__call__`` and ``values`` (``mask`` counts apart).
    """

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self.count = 0

    def mask(self, text: str) -> tuple[str, int]:
        """``text`` with each high-confidence secret replaced by its marker, and how many were.

        What is masked is stored: a lone surrogate (a path's byte that is not UTF-8, where no
        reading made it valid first) becomes U+FFFD (``texts.valid``).
        """
        if not text:
            return text, 0
        text = valid(text)
        spans = sorted(_detect(text), key=lambda span: (span.start, -span.end))
        if not spans:
            return text, 0
        merged: list[_Span] = []
        for span in spans:
            if merged and span.start < merged[-1].end:
                last = merged[-1]
                kind = span.kind if span.rank < last.rank else last.kind
                merged[-1] = _Span(last.start, max(last.end, span.end), kind, min(last.rank, span.rank))
            else:
                merged.append(span)
        pieces: list[str] = []
        position = 0
        for span in merged:
            pieces.append(text[position : span.start])
            pieces.append(marker(span.kind, self._tag(text[span.start : span.end])))
            position = span.end
        pieces.append(text[position:])
        return "".join(pieces), len(merged)

    def __call__(self, text: str) -> str:
        """``text`` masked, its secrets counted in ``count``."""
        masked, found = self.mask(text)
        self.count += found
        return masked

    def name(self, text: str) -> str:
        """A name made from a path (a project folder, a session's key) masked: as text, and for
        the token formats as they stand once every other character became ``-`` (Claude Code
        names a project's folder so: ``/home/ana/ghp_x…`` → ``-home-ana-ghp-x…``)."""
        masked = self(text)
        spans = sorted(_mangled(masked), key=lambda span: span.start)
        if not spans:
            return masked
        pieces, position = [], 0
        for span in spans:
            if span.start < position:
                continue
            pieces += [masked[position : span.start], marker(span.kind, self._tag(masked[span.start : span.end]))]
            position = span.end
            self.count += 1
        return "".join(pieces) + masked[position:]

    def values(self, value: Any) -> Any:
        """Every string in ``value`` (lists and objects walked, keys too) masked, counted in ``count``."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self.values(key): self.values(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.values(item) for item in value]
        return value

    def _tag(self, secret: str) -> str | None:
        """The tag of a secret as it is, whatever form it stands in: wrapped across lines, or its '_'
        turned into '-' in a name made from a path, it gets the tag it gets whole."""
        if self.key is None:
            return None
        plain = _UNWRAPPED.sub("", secret).replace("_", "-")
        digest = hmac.new(self.key, plain.encode("utf-8", "surrogatepass"), "sha256").hexdigest()
        return digest[:TAG_CHARS]


def mask(text: str) -> tuple[str, int]:
    """``text`` with each high-confidence secret replaced by its marker (no tag), and how many were."""
    return Masker().mask(text)
