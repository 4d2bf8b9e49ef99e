"""Walking a workspace: which files make which documents, and what each one says.

A *source* is the unit that is re-read when any of its files change: a
conversation folder, or one file. Parsing a source yields document rows, their
secrets masked (``MASKED_FIELDS``); a problem with a file never raises, it is
reported as a ``Problem``.

The modules, in the order a source goes through them: ``walking`` (a workspace's
files), ``sources`` (which files make which source, of which kind), ``reading`` (a
file's text, safely), ``frontmatter`` (front matter, titles, tags), ``kinds`` (the five
parsers), ``vocabulary`` (the filter words), ``parsing`` (a source's documents, masked
and storable); ``model`` holds what they pass along, ``worker`` what the indexer's
worker process needs. The names used outside the package are re-exported here.
"""

from archivist.documents.frontmatter import first_heading as first_heading
from archivist.documents.frontmatter import humanize as humanize
from archivist.documents.frontmatter import normalize_tags as normalize_tags
from archivist.documents.frontmatter import split_front_matter as split_front_matter
from archivist.documents.model import FileInfo as FileInfo
from archivist.documents.model import Parsed as Parsed
from archivist.documents.model import Problem as Problem
from archivist.documents.model import Source as Source
from archivist.documents.model import sha256 as sha256
from archivist.documents.model import storable as storable
from archivist.documents.parsing import MASKED_FIELDS as MASKED_FIELDS
from archivist.documents.parsing import MAX_PROBLEMS_PER_FILE as MAX_PROBLEMS_PER_FILE
from archivist.documents.parsing import PARSER_VERSION as PARSER_VERSION
from archivist.documents.parsing import parse as parse
from archivist.documents.parsing import parse_all as parse_all
from archivist.documents.parsing import unparsed as unparsed
from archivist.documents.reading import DATA_SUFFIXES as DATA_SUFFIXES
from archivist.documents.reading import MAX_DATA_FILE_BYTES as MAX_DATA_FILE_BYTES
from archivist.documents.reading import MAX_FILE_BYTES as MAX_FILE_BYTES
from archivist.documents.reading import read_text as read_text
from archivist.documents.sources import CONVERSATION_TYPES as CONVERSATION_TYPES
from archivist.documents.sources import MARKDOWN_SUFFIXES as MARKDOWN_SUFFIXES
from archivist.documents.sources import TEXT_SUFFIXES as TEXT_SUFFIXES
from archivist.documents.sources import classify as classify
from archivist.documents.sources import conversation_unit as conversation_unit
from archivist.documents.sources import group_sources as group_sources
from archivist.documents.sources import is_date_folder as is_date_folder
from archivist.documents.vocabulary import filter_tokens as filter_tokens
from archivist.documents.walking import IGNORED_DIRS as IGNORED_DIRS
from archivist.documents.walking import safe_path as safe_path
from archivist.documents.walking import walk as walk
from archivist.documents.worker import exit_with_parent as exit_with_parent
