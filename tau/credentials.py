"""What a credential looks like, so no message, log or checked-in file ever carries one.

One list serves the descriptor scanner (which refuses a file holding any of these) and the
error printer (which redacts them from every line it prints). Patterns match the token
shapes of the providers researchers paste most (GitHub, Hugging Face, OpenAI, AWS, Azure,
Slack, JWTs, PEM blocks); field and flag names say which values are secret by role.
"""

from __future__ import annotations

import itertools
import re

REDACTED = "<redacted>"

VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a PEM certificate or private key", re.compile(r"-----BEGIN [A-Z ]+-----")),
    ("base64-encoded certificate or key data", re.compile(r"LS0tLS1CRUdJTi")),
    ("a JSON Web Token", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{16,}", re.IGNORECASE)),
    ("an Entra client secret", re.compile(r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("an OpenAI or Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("a storage account key or connection string", re.compile(r"AccountKey=|SharedAccessKey=")),
    ("a SAS token", re.compile(r"[?&]sig=[A-Za-z0-9%+/=]{16,}")),
    ("a password in a URL", re.compile(r"://[^/\s:@]+:[^/\s@]+@")),
)

# The match to cut out of a line: whole tokens, the rest of a PEM/base64 run, URL passwords.
_REDACT = re.compile(
    r"-----BEGIN [A-Z ]+-----[A-Za-z0-9+/=\s]*(?:-----END [A-Z ]+-----)?"
    r"|LS0tLS1CRUdJTi[A-Za-z0-9+/=]*"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
    r"|(?i:\bBearer\s+)[A-Za-z0-9._~+/-]{16,}"
    r"|[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_\w{30,}"
    r"|\bhf_[A-Za-z0-9]{30,}"
    r"|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|(?:AccountKey|SharedAccessKey)=[^;\s\"']*"
    r"|(?<=[?&]sig=)[A-Za-z0-9%+/=]{16,}"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"
)

# Field, key and flag names whose values are secret by role, by whole word: `HF_TOKEN`,
# `env_secret`, `clientSecret`, `DB_PASSWORD`, `API_KEY` are; `TOKENIZERS_PARALLELISM` is not.
_SECRET_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "token",
        "tokens",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "apikey",
        "pat",
        "sas",
    }
)
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("private", "key"),
        ("access", "key"),
        ("client", "key"),
        ("account", "key"),
        ("secret", "key"),
        ("signing", "key"),
    }
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def looks_like(text: str) -> str:
    """What credential `text` contains ("a GitHub token"), or "" when none."""
    for what, pattern in VALUE_PATTERNS:
        if pattern.search(text):
            return what
    return ""


def redact(text: str) -> str:
    """`text` with every credential-shaped run replaced by `<redacted>`."""
    return _REDACT.sub(REDACTED, text)


def is_secret_name(name: str) -> bool:
    """Whether a field, key or flag named `name` holds a secret (`env_secret`, `HF_TOKEN`)."""
    words = [word.lower() for word in _WORD.findall(name[:200])]
    return any(word in _SECRET_WORDS for word in words) or any(
        pair in _SECRET_PAIRS for pair in itertools.pairwise(words)
    )
