"""Masking secrets at index time: what is masked, how it is marked, and what is left alone.

Every secret here is made up when the test runs, from a seeded random generator, in the
shape of the real thing; none is a real credential.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import subprocess
import sys
import time

import pytest

from archivist.secrets import marker, mask

_RANDOM = random.Random(20250624)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
BASE64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
MARKER = re.compile(r"\[secret masked: [a-z0-9-]+\]")


def rand(length: int, alphabet: str = ALNUM) -> str:
    """Random characters; for mixed alphabets, at least one upper, lower and digit, as real keys have."""
    while True:
        value = "".join(_RANDOM.choice(alphabet) for _ in range(length))
        if alphabet != ALNUM and alphabet != URLSAFE and alphabet != BASE64:
            return value
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
            return value


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def jwt() -> str:
    header = b64url({"alg": "HS256", "typ": "JWT"})
    payload = b64url({"sub": "user-1234", "name": "Ada", "iat": 1750000000})
    return f"{header}.{payload}.{rand(43, URLSAFE)}"


def pem_body(lines: int = 6, width: int = 64) -> str:
    return "\n".join(rand(width, BASE64) for _ in range(lines)) + "\n" + rand(20, BASE64) + "=="


# (kind, text before, secret, text after): the whole secret is replaced by the marker of its kind.
CASES = [
    ("aws-access-key", "AWS_ACCESS_KEY_ID=", "AKIA" + rand(16, UPPER_DIGITS), "\n"),
    ("aws-access-key", "temporary key id ", "ASIA" + rand(16, UPPER_DIGITS), " expires in 1h"),
    ("aws-secret-key", "[default]\naws_secret_access_key = ", rand(40, BASE64), "\nregion = eu-west-1"),
    ("aws-secret-key", "export AWS_SECRET_ACCESS_KEY=", rand(40, BASE64), ""),
    ("aws-secret-key", '{"Credentials": {"SecretAccessKey": "', rand(40, BASE64), '"}}'),
    ("aws-secret-key", 'session = boto3.Session(aws_secret_access_key="', rand(40, BASE64), '")'),
    ("aws-session-token", '"SessionToken": "', "IQoJb3JpZ2luX2Vj" + rand(300, BASE64), '",'),
    ("github-token", "export GITHUB_TOKEN=", "ghp_" + rand(36), "\n"),
    ("github-token", "oauth: ", "gho_" + rand(36), ""),
    ("github-token", "user-to-server ", "ghu_" + rand(36), "."),
    ("github-token", "installation token ", "ghs_" + rand(36), " (1 hour)"),
    ("github-token", "refresh=", "ghr_" + rand(76), ""),
    ("github-token", "fine-grained: ", "github_pat_" + rand(22) + "_" + rand(59), "\n"),
    ("openai-api-key", "OPENAI_API_KEY=", "sk-proj-" + rand(74, URLSAFE) + "T3BlbkFJ" + rand(74, URLSAFE), "\n"),
    ("openai-api-key", "key: ", "sk-" + rand(20) + "T3BlbkFJ" + rand(20), " (legacy)"),
    ("openai-api-key", "client = OpenAI(api_key='", "sk-proj-" + rand(120, URLSAFE), "')"),
    ("openai-api-key", "service account ", "sk-svcacct-" + rand(100, URLSAFE), ""),
    ("anthropic-api-key", "ANTHROPIC_API_KEY=", "sk-ant-api03-" + rand(93, URLSAFE) + "AA", "\n"),
    ("anthropic-api-key", "admin key ", "sk-ant-admin01-" + rand(93, URLSAFE) + "AA", ""),
    ("slack-token", "SLACK_BOT_TOKEN=", f"xoxb-{rand(11, string.digits)}-{rand(13, string.digits)}-{rand(24)}", ""),
    (
        "slack-token",
        "user token ",
        f"xoxp-{rand(11, string.digits)}-{rand(11, string.digits)}-{rand(13, string.digits)}-{rand(32, '0123456789abcdef')}",
        ".",
    ),
    (
        "slack-webhook",
        "curl -X POST ",
        f"https://hooks.slack.com/services/T{rand(10, UPPER_DIGITS)}/B{rand(10, UPPER_DIGITS)}/{rand(24)}",
        " -d '{}'",
    ),
    ("stripe-key", "stripe.api_key = '", "sk_live_" + rand(99), "'"),
    ("stripe-key", "restricted ", "rk_live_" + rand(24), ""),
    ("google-api-key", "https://maps.googleapis.com/maps/api/js?key=", "AIza" + rand(35, URLSAFE), "&callback=init"),
    ("huggingface-token", "HF_TOKEN=", "hf_" + rand(34), "\n"),
    ("gitlab-token", "git clone https://oauth2:", "glpat-" + rand(20, URLSAFE), "@gitlab.com/group/project.git"),
    ("sendgrid-api-key", "SENDGRID_API_KEY=", "SG." + rand(22, URLSAFE) + "." + rand(43, URLSAFE), ""),
    ("pypi-token", "password = ", "pypi-AgEIcHlwaS5vcmc" + rand(120, URLSAFE), "\n"),
    ("jwt", "id_token: ", jwt(), "\n"),
    ("jwt", 'curl -H "Authorization: Bearer ', jwt(), '" https://api.internal/v1/me'),
    ("bearer-token", 'curl -H "Authorization: Bearer ', rand(40, URLSAFE), '" https://api.example.com/v1/models'),
    ("bearer-token", 'headers = {"Authorization": "Bearer ', rand(32), '"}'),
    ("bearer-token", "GET /v1/me HTTP/1.1\nAuthorization: token ", rand(40, "0123456789abcdef"), "\nAccept: */*"),
    ("basic-auth", "Authorization: Basic ", base64.b64encode(f"deploy:{rand(16)}".encode()).decode(), "\r\n"),
    ("url-password", "DATABASE_URL=postgres://app:", rand(18), "@db.internal:5432/app"),
    ("url-password", "redis://:", rand(24, URLSAFE), "@cache.internal:6379/0"),
    ("url-password", "git remote add origin https://deploy:", "Tr0ub4dor&3" + rand(6), "@git.example.com/repo.git"),
    ("url-password", "mongodb+srv://admin:", rand(12, string.ascii_letters), "@cluster0.abcde.mongodb.net/test"),
    ("password", "DB_PASSWORD=", rand(16), "\nDB_HOST=localhost"),
    ("password", "PGPASSWORD=", "S3cure!" + rand(8), " psql -h db -U app"),
    ("password", "mysqldump --password=", rand(14), " app > dump.sql"),
    ("password", '{"username": "admin", "password": "', rand(12) + "!", '"}'),
    ("password", "POSTGRES_PASSWORD: ", rand(20), "\n"),
    ("token", "export NPM_AUTH_TOKEN=", rand(36, URLSAFE), ""),
    ("token", "HEROKU_API_TOKEN='", rand(36), "'"),
    ("api-key", 'config = {"apiKey": "', rand(40), '"}'),
    ("api-key", "MISTRAL_API_KEY=", rand(32), "\n"),
    ("secret", "JWT_SECRET=", rand(64, "0123456789abcdef"), "\n"),
    ("secret", "client_secret: '", rand(30, URLSAFE), "'"),
    ("secret", 'SECRET_KEY = "', "django-insecure-" + rand(40, ALNUM + "!@#$%^&*(-_=+)"), '"'),
]
CASE_IDS = [f"{kind}-{number}" for number, (kind, *_rest) in enumerate(CASES)]


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES, ids=CASE_IDS)
def test_each_kind_is_masked_whole_and_named(kind: str, before: str, secret: str, after: str) -> None:
    masked, count = mask(before + secret + after)
    assert (masked, count) == (before + marker(kind) + after, 1)


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES, ids=CASE_IDS)
def test_the_marker_keeps_no_part_of_the_secret(kind: str, before: str, secret: str, after: str) -> None:
    masked, _ = mask(f"{before}{secret}{after}")
    assert MARKER.fullmatch(marker(kind))
    assert secret not in masked
    # No stretch of eight characters of the secret survives anywhere.
    assert not any(secret[i : i + 8] in masked for i in range(len(secret) - 7))


@pytest.mark.parametrize(("kind", "before", "secret", "after"), CASES, ids=CASE_IDS)
def test_masking_twice_changes_nothing(kind: str, before: str, secret: str, after: str) -> None:
    masked, _ = mask(before + secret + after)
    assert mask(masked) == (masked, 0)


def test_the_count_is_one_per_secret_and_per_occurrence() -> None:
    token, key, password = "ghp_" + rand(36), "AKIA" + rand(16, UPPER_DIGITS), rand(16)
    text = (
        f"I set GITHUB_TOKEN={token} and then pasted it again: {token}\n"
        f"aws_access_key_id = {key}\n"
        f"postgres://app:{password}@db:5432/app\n"
        "Nothing else here is secret: commit 3f2a9c0e1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69."
    )
    masked, count = mask(text)
    assert count == 4
    assert masked.count(marker("github-token")) == 2
    assert masked.count(marker("aws-access-key")) == 1
    assert masked.count(marker("url-password")) == 1
    assert "commit 3f2a9c0e1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69." in masked


def test_a_secret_in_a_named_assignment_takes_the_kind_of_its_format() -> None:
    key = "sk-proj-" + rand(120, URLSAFE)
    assert mask(f"OPENAI_API_KEY={key}") == ("OPENAI_API_KEY=" + marker("openai-api-key"), 1)
    token = "ghs_" + rand(36)
    assert mask(f"https://x-access-token:{token}@github.com/org/repo.git") == (
        f"https://x-access-token:{marker('github-token')}@github.com/org/repo.git",
        1,
    )


@pytest.mark.parametrize(
    "header", ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
)
def test_a_private_key_block_is_masked_across_its_lines(header: str) -> None:
    block = f"-----BEGIN {header}-----\n{pem_body()}\n-----END {header}-----"
    text = f"Here is the key I generated:\n\n{block}\n\nThen run `ssh-add` with it."
    masked, count = mask(text)
    assert count == 1
    assert masked == f"Here is the key I generated:\n\n{marker('private-key')}\n\nThen run `ssh-add` with it."


def test_private_key_blocks_in_pgp_form_escaped_in_json_and_cut_short() -> None:
    pgp = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n{pem_body(8)}\n-----END PGP PRIVATE KEY BLOCK-----"
    assert mask(pgp) == (marker("private-key"), 1)

    # A service-account file pasted as JSON: the block is one line with escaped newlines.
    body = "\\n".join(rand(64, BASE64) for _ in range(5))
    service_account = json.dumps({"type": "service_account", "private_key_id": "1"})[:-1]
    text = f'{service_account}, "private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n"}}'
    masked, count = mask(text)
    assert count == 1
    assert masked.endswith(f'"private_key": "{marker("private-key")}\\n"}}')

    # A block pasted without its end: the header and the lines of key that follow are masked.
    cut = f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body(4)}\n\n(the rest scrolled off)"
    assert mask(cut) == (f"{marker('private-key')}\n\n(the rest scrolled off)", 1)


def test_two_private_keys_count_two() -> None:
    one = f"-----BEGIN EC PRIVATE KEY-----\n{pem_body(3)}\n-----END EC PRIVATE KEY-----"
    two = f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body(5)}\n-----END RSA PRIVATE KEY-----"
    assert mask(f"{one}\nand\n{two}") == (f"{marker('private-key')}\nand\n{marker('private-key')}", 2)


NOT_SECRETS = {
    "prose": (
        "The token budget is 200k tokens, so pass the key points to the model. "
        "Rotate the secret, then update the password manager and the API key settings."
    ),
    "code that reads secrets": (
        'api_key = api_key or os.environ["OPENAI_API_KEY"]\n'
        'headers = {"Authorization": f"Bearer {api_key}"}\n'
        "password = getpass.getpass()\n"
        "secret_key = settings.SECRET_KEY\n"
        "client = OpenAI(api_key=api_key, timeout=30)\n"
        "if token == expected_token:\n"
        "    session.token = token\n"
        "const apiKey = process.env.OPENAI_API_KEY!;\n"
        "RESEND_API_KEY: process.env.RESEND_API_KEY!,\n"
        "def login(username: str, password: str) -> Token:\n"
        "tokenizer = AutoTokenizer.from_pretrained(model_path)\n"
    ),
    "identifiers and settings": (
        "max_tokens=4096\nMAX_TOKENS=100000\nTOKENIZER_PATH=/models/tokenizer\nPWD=/home/dev/project\n"
        "export OPENAI_API_KEY=$OPENAI_API_KEY\nPASSWORD_MIN_LENGTH=12\ntoken_type: bearer\n"
        '{"input_tokens": 1234, "output_tokens": 56, "cache_key": "abc"}\n'
        "GOOGLE_APPLICATION_CREDENTIALS=/secrets/service-account.json\n"
        '"@types/jsonwebtoken": "^9.0.9",\n'
        "secrets: inherit\n"
        'image_token = "|SPEAKER|"\n'
        'HEADER_ACCESS_TOKEN = "X-Access-Token"\n'
        'credentials: "same-origin"\n'
    ),
    "hashes and ids": (
        "commit 3f2a9c0e1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69\n"
        "Merge: 1a2b3c4 5d6e7f8\n"
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  layer.tar\n"
        "request_id=123e4567-e89b-12d3-a456-426614174000 trace=0af7651916cd43dd8448eb211c80319c\n"
        "md5 d41d8cd98f00b204e9800998ecf8427e\n"
    ),
    "urls without a password": (
        "See https://docs.python.org/3/library/re.html#re.Pattern and http://localhost:8080/api?x=1&y=2.\n"
        "git clone git@github.com:org/repo.git; ssh://git@github.com/org/repo.git; https://user@example.com/\n"
        "mailto:dev@example.com https://web.archive.org/web/2020/https://example.com:443/@user\n"
        "mongodb://db1:27017,db2:27017/app?replicaSet=rs0\n"
    ),
    "placeholders": (
        "Set OPENAI_API_KEY=sk-... in your shell, or pass <your-key>.\n"
        "API_KEY=xxxx\nDB_PASSWORD=changeme\nGITHUB_TOKEN=${TOKEN}\nexport TOKEN=$OPENAI_API_KEY\n"
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
        "AWS_SECRET_ACCESS_KEY=your-secret-access-key\n"
        "curl -H 'Authorization: Bearer <token>' -H \"Authorization: Bearer $TOKEN\"\n"
        "postgres://user:password@localhost:5432/db and postgres://app:${DB_PASSWORD}@db/app\n"
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        'password: "********"\nSECRET_KEY="<generate one>"\ntoken: "{{ secrets.TOKEN }}"\n'
    ),
    "a private key header without a key": (
        'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n'
        "    raise ValueError('use -----BEGIN PRIVATE KEY----- ... -----END PRIVATE KEY----- (PKCS#8)')\n"
    ),
    "base64 and sequences that hold key-like runs": (
        # A key id shape inside a longer run of base64 or of DNA letters is chance, not a key.
        "font = 'QAHAEwAAQAAAAAAAgAHAGQAAQAAAAAAAwAaAKIAAQAAAAAABAAHAM0AAQAAAAAABQA8AU8AAQAAAA'\n"
        "seq = 'AAACCATCTCTACCGGTTCGCTTTCACTGGATATCGCGCTTGGGGCAGGTGGTCTGCCGATGGGCCG'\n"
        "blob = 'jA0ECQMCAK"
        "IAQ2ZB8KJMN4PQRSTVWyz7AI"
        "zaSyB9x2Q8kL0mN3pR5tV7wX9zA1cE3gI5kM7oQ9sU1wY3'\n"
        # A '/' on one side is a path's separator only where base64 does not go on at the other.
        "blob = 'bG9uZy9/AKIA2Q7ZT4XK9B3MN6PWc3RyaW5n+AKIA7HQ2RT5NX8CM4VB3/aGVyZQ'\n"
    ),
    "test output": (
        "PASSED tests/test_auth.py::test_token_refresh\nFAILED tests/test_auth.py::test_password_reset - AssertionError\n"
        "=================== 2 passed, 1 failed in 0.42s ===================\n"
    ),
}


@pytest.mark.parametrize("text", list(NOT_SECRETS.values()), ids=list(NOT_SECRETS))
def test_what_is_not_a_secret_is_left_alone(text: str) -> None:
    assert mask(text) == (text, 0)


def test_empty_and_secret_free_text() -> None:
    assert mask("") == ("", 0)
    assert mask("hello") == ("hello", 0)


def test_a_whole_session_masked_twice_is_masked_once() -> None:
    session = "\n\n".join(before + secret + after for _, before, secret, after in CASES)
    session += "\n\n" + "\n".join(NOT_SECRETS.values())
    masked, count = mask(session)
    assert count == len(CASES)
    assert mask(masked) == (masked, 0)
    for text in NOT_SECRETS.values():
        assert text in masked


def test_non_ascii_text_around_secrets() -> None:
    token, password = "ghp_" + rand(36), rand(14)
    text = f"Voilà le jeton 🎉 {token} — 日本語のテキスト\nİstanbul: DB_PASSWORD={password} ✓ Привет"
    masked, count = mask(text)
    assert count == 2
    assert masked == (
        f"Voilà le jeton 🎉 {marker('github-token')} — 日本語のテキスト\n"
        f"İstanbul: DB_PASSWORD={marker('password')} ✓ Привет"
    )
    assert mask("naïve café résumé Ελληνικά") == ("naïve café résumé Ελληνικά", 0)


def test_very_long_lines_are_read_whole_and_in_time() -> None:
    blob = base64.urlsafe_b64encode(random.Random(7).randbytes(1_500_000)).decode()
    key = "AKIA" + rand(16, UPPER_DIGITS)
    prose = " ".join(["the token and the key and the password"] * 50_000)
    text = f"{blob} {prose} aws_access_key_id={key} {blob}"
    started = time.perf_counter()
    masked, count = mask(text)
    elapsed = time.perf_counter() - started
    assert count == 1
    assert masked == f"{blob} {prose} aws_access_key_id={marker('aws-access-key')} {blob}"
    assert elapsed < 10, f"{len(text) / 1e6:.1f} MB in {elapsed:.1f} s"


def test_masking_imports_nothing_that_can_call_out() -> None:
    """Detection is patterns only: no scanner that can verify a key with its service is loaded."""
    code = (
        "import sys\n"
        "from archivist.secrets import mask\n"
        "assert mask('key AKIA' + '2Q7ZT4XK9B3MN6PW ok')[1] == 1\n"
        "loaded = {name.split('.')[0] for name in sys.modules}\n"
        "assert not loaded & {'requests', 'urllib3', 'http', 'detect_secrets'}, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- keys wrapped across lines -------------------------------------------------------------

WRAPPED = [
    ("anthropic-api-key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA"),
    ("openai-api-key", "sk-proj-" + rand(120, URLSAFE)),
    ("github-token", "ghp_" + rand(36)),
    ("huggingface-token", "hf_" + rand(34)),
    ("aws-access-key", "AKIA" + rand(16, UPPER_DIGITS)),
    ("google-api-key", "AIza" + rand(35, URLSAFE)),
]


@pytest.mark.parametrize(("kind", "secret"), WRAPPED, ids=[kind for kind, _ in WRAPPED])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\\n"], ids=["lf", "crlf", "escaped"])
def test_a_key_wrapped_at_the_end_of_a_long_line_is_masked_in_both_parts(kind: str, secret: str, newline: str) -> None:
    lead = "The key to use for the staging deployment is "
    cut = len(secret) // 2 if len(secret) < 60 else 30
    text = f"{lead}{secret[:cut]}{newline}{secret[cut:]} and nothing else"
    masked, count = mask(text)
    assert (masked, count) == (f"{lead}{marker(kind)} and nothing else", 1)
    assert secret[cut:] not in masked and secret[:cut] not in masked


def test_a_key_wrapped_over_three_lines_is_masked_whole() -> None:
    secret = "sk-proj-" + rand(150, URLSAFE)
    lead = "x" * 60 + " "
    text = f"{lead}{secret[:40]}\n{secret[40:120]}\n{secret[120:]}\nnext line"
    assert mask(text) == (f"{lead}{marker('openai-api-key')}\nnext line", 1)


def test_a_line_break_after_a_whole_key_on_a_short_line_joins_nothing() -> None:
    token = "ghp_" + rand(36)
    text = f"token {token}\nDone5 and more"  # a short line: not a wrapping column
    assert mask(text) == (f"token {marker('github-token')}\nDone5 and more", 1)


# Keys of 108 characters, wrapped at 50: the first line alone has a whole key's shape.
WHOLE_ON_ONE_LINE = [
    ("anthropic-api-key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA"),
    ("openai-api-key", "sk-proj-" + rand(100, URLSAFE)),
]


@pytest.mark.parametrize(("kind", "secret"), WHOLE_ON_ONE_LINE, ids=[kind for kind, _ in WHOLE_ON_ONE_LINE])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\\n"], ids=["lf", "crlf", "escaped"])
def test_a_key_whole_on_its_first_line_goes_on_where_the_next_line_completes_it(
    kind: str, secret: str, newline: str
) -> None:
    """A key wrapped where its first line already has a key's shape (``sk-`` and 32 characters) is
    masked in both parts: the next line starts with the rest of a generated key."""
    cut = 50
    assert mask(secret[:cut]) == (marker(kind), 1)
    text = f"{secret[:cut]}{newline}{secret[cut:]}{newline}and then the deploy."
    masked, count = mask(text)
    assert (masked, count) == (f"{marker(kind)}{newline}and then the deploy.", 1)
    sentence = f"the key:{newline}{secret[:cut]}{newline}{secret[cut:]}."  # a full stop after the key
    assert mask(sentence) == (f"the key:{newline}{marker(kind)}.", 1)


@pytest.mark.parametrize("lead", ["", "export ANTHROPIC_API_KEY="], ids=["alone", "long-line"])
def test_after_a_whole_key_a_word_a_name_or_a_path_is_not_its_rest(lead: str) -> None:
    key = "sk-ant-api03-" + rand(93, URLSAFE) + "AA"
    for after in ("Done5 and more", "echo done", "Understood, then.", "DEBUG=1", "OPENAI_KEY2=x", "src/app2/Main.py"):
        text = f"{lead}{key}\n{after}"
        assert mask(text) == (f"{lead}{marker('anthropic-api-key')}\n{after}", 1), after


def test_prose_wrapped_at_a_long_line_is_left_alone() -> None:
    text = "Ask the team about the sk-ant key rotation schedule before the\nrelease, and the task-\nlist\n" * 3
    assert mask(text) == (text, 0)


# --- secrets encoded in base64 ---------------------------------------------------------------


def test_a_base64_run_that_decodes_to_credentials_is_masked_whole() -> None:
    credentials = (
        f"[default]\naws_access_key_id = AKIA{rand(16, UPPER_DIGITS)}\naws_secret_access_key = {rand(40, BASE64)}\n"
    )
    encoded = base64.b64encode(credentials.encode()).decode()
    text = f"echo {encoded} | base64 -d > ~/.aws/credentials"
    masked, count = mask(text)
    assert count == 1 and encoded not in masked
    assert re.fullmatch(r"echo \[secret masked: base64-[a-z0-9-]+\] \| base64 -d > ~/\.aws/credentials", masked)
    wrapped = base64.b64encode(f"export GITHUB_TOKEN=ghp_{rand(36)}".encode()).decode()
    assert mask(f'data: "{wrapped}"') == (f'data: "{marker("base64-github-token")}"', 1)


def test_base64_of_text_without_a_secret_and_of_bytes_is_left_alone() -> None:
    text = (
        base64.b64encode(b"Just a note about the deployment window on Friday.").decode()
        + " "
        + base64.b64encode(random.Random(3).randbytes(300)).decode()
        + " "
        + base64.b64encode(b'{"alg": "HS256", "typ": "JWT"}').decode()
    )
    assert mask(text) == (text, 0)


# --- one marker per secret, under an archive's key ---------------------------------------------


def test_under_a_key_the_same_secret_gets_the_same_marker_and_others_another() -> None:
    from archivist.secrets import Masker

    first, second = "ghp_" + rand(36), "ghp_" + rand(36)
    masker = Masker(b"k" * 32)
    masked, count = masker.mask(f"{first} then {second} then {first}")
    tags = re.findall(r"\[secret masked: github-token #([0-9a-f]{6})\]", masked)
    assert count == 3 and len(tags) == 3 and tags[0] == tags[2] != tags[1]
    assert Masker(b"k" * 32).mask(first)[0] == f"{marker('github-token', tags[0])}"
    assert Masker(b"other key" * 4).mask(first)[0] != Masker(b"k" * 32).mask(first)[0]
    assert masker.mask(masked) == (masked, 0)


def test_a_masker_masks_every_string_of_a_value_and_counts_them() -> None:
    from archivist.secrets import Masker

    token = "ghp_" + rand(36)
    masker = Masker()
    value = {"cwd": f"/home/ana/{token}", "files": [f"/tmp/{token}/a.py", 3, None], token: True}
    assert masker.values(value) == {
        "cwd": f"/home/ana/{marker('github-token')}",
        "files": [f"/tmp/{marker('github-token')}/a.py", 3, None],
        marker("github-token"): True,
    }
    assert masker.count == 3


# --- hostile text: every detector reads a text in time proportional to it ---------------------


def _hostile_units() -> list[str]:
    from archivist.secrets.anchors import _CONTEXT, _TOKEN_PREFIXES

    anchors = list(dict.fromkeys((*_TOKEN_PREFIXES, *_CONTEXT)))
    units = [anchor + tail for anchor in anchors for tail in ("", "\n", "=", '="', ": ", ".", "://", "\\n")]
    # Whole keys, one a line: each line's key may go on at the start of the next.
    keys = ("ghp_" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7j", "sk-proj-" + "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7j")
    return units + [key + tail for key in keys for tail in ("\n", "\\n")]


def test_a_text_of_nothing_but_anchors_is_masked_in_time_proportional_to_it() -> None:
    """A line made of one detector's anchor over and over (``pass=pass=…``, ``eyJeyJ…``) once took
    minutes for 50 KB; each now takes well under a second for 200 KB."""
    from archivist.secrets import Masker

    masker = Masker(b"k" * 32)
    slow = []
    for unit in _hostile_units():
        text = unit * (200_000 // len(unit))
        started = time.perf_counter()
        masker.mask(text)
        elapsed = time.perf_counter() - started
        if elapsed > 5:
            slow.append((unit, round(elapsed, 1)))
    assert not slow


def test_a_secret_gets_one_tag_whole_wrapped_or_in_a_name_made_from_a_path() -> None:
    from archivist.secrets import Masker

    token = "ghp_" + rand(36)
    masker = Masker(b"k" * 32)
    whole = masker.mask(f"the token {token} here")[0]
    wrapped = masker.mask("x" * 70 + " " + token[:20] + "\n" + token[20:] + " here")[0]
    named = masker.name("-home-ana-" + token.replace("_", "-") + "-app")
    tags = {re.search(r"#([0-9a-f]{6})\]", text).group(1) for text in (whole, wrapped, named)}  # type: ignore[union-attr]
    assert len(tags) == 1, (whole, wrapped, named)


@pytest.mark.parametrize(
    ("kind", "secret"),
    [
        ("anthropic-api-key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA"),
        ("openai-api-key", "sk-proj-" + rand(120, URLSAFE)),
        ("huggingface-token", "hf_" + rand(34)),
        ("google-api-key", "AIza" + rand(35, URLSAFE)),
        ("aws-access-key", "AKIA" + rand(16, UPPER_DIGITS)),
    ],
    ids=["anthropic-api-key", "openai-api-key", "huggingface-token", "google-api-key", "aws-access-key"],
)
@pytest.mark.parametrize("escape", ["\\n", "\\r\\n", "\\t"], ids=["lf", "crlf", "tab"])
def test_a_token_at_the_start_of_a_line_escaped_in_json_is_masked(kind: str, secret: str, escape: str) -> None:
    """In JSON text a line break is ``\\n``: its ``n`` is not the end of a word the key would be part of."""
    text = json.dumps({"output": f"the key:\n{secret}\nthe end"}).replace("\\n", escape)
    assert mask(text) == (text.replace(secret, marker(kind)), 1)


def test_an_aws_key_id_as_a_path_segment_is_masked() -> None:
    key = "AKIA" + rand(16, UPPER_DIGITS)
    for before, after in (("src/", "/x.py"), ("s3://backups/", "/2025/dump.sql"), ("/home/ana/.keys/", "")):
        assert mask(f"{before}{key}{after}") == (f"{before}{marker('aws-access-key')}{after}", 1)
    assert mask("src/AKIAIOSFODNN7EXAMPLE/x.py") == ("src/AKIAIOSFODNN7EXAMPLE/x.py", 0)  # AWS's documented key


@pytest.mark.parametrize(
    ("kind", "secret"),
    [("huggingface-token", "hf_" + rand(34)), ("anthropic-api-key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA")],
    ids=["huggingface-token", "anthropic-api-key"],
)
def test_a_token_after_a_hyphen_in_a_name_is_masked(kind: str, secret: str) -> None:
    assert mask(f"ledger-{secret} and more") == (f"ledger-{marker(kind)} and more", 1)
    assert mask(f"ledger{secret}")[1] == 0  # inside a word: not where a token starts


def test_an_npm_registry_token_is_masked() -> None:
    token = "npm_" + rand(36)
    assert mask(f"//registry.npmjs.org/:_authToken={token}\n") == (
        f"//registry.npmjs.org/:_authToken={marker('npm-token')}\n",
        1,
    )
