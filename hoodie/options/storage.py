"""The storage domain: the object store options the core itself reads.

A table's store is configured by the keyword arguments of its pyarrow file system
(`S3FileSystem`, `GcsFileSystem`, `AzureFileSystem`), given as strings: in a dbt profile's
`storage_options`, or as `hoodie.storage.<name>` read options. Those declared here are the
ones dbt-hoodie reads itself: to configure the conditional writes of `hoodie.object_store`,
to keep credentials (`secret`) out of what a catalog table stores, and to type timeouts. Any
other keyword goes to pyarrow as given, which refuses one it does not know (the error names
the file system's class), so pyarrow's own list stays the one list of the rest.
"""

from __future__ import annotations

from .property import ConfigProperty

# Any option whose name ends so is a number of seconds (pyarrow's connect_timeout, ...).
TIMEOUT_SUFFIX = "_timeout"

ENDPOINT_OVERRIDE = ConfigProperty(
    "endpoint_override", None, "S3, GCS: the store's host[:port] or URL (a local S3 or GCS "
    "emulator, another S3-compatible store)",
)  # fmt: skip
SCHEME = ConfigProperty("scheme", "https",
                        "S3, GCS: http or https, for an endpoint_override without one")  # fmt: skip
REGION = ConfigProperty("region", None, "S3: the bucket's region")
ACCESS_KEY = ConfigProperty("access_key", None, "S3: the access key id", secret=True)
SECRET_KEY = ConfigProperty("secret_key", None, "S3: the secret access key", secret=True)
SESSION_TOKEN = ConfigProperty("session_token", None, "S3: the session token of temporary "
                               "credentials", secret=True)  # fmt: skip
ROLE_ARN = ConfigProperty("role_arn", None, "S3: a role pyarrow assumes", secret=True)
EXTERNAL_ID = ConfigProperty("external_id", None, "S3: that role's external id", secret=True)
ACCESS_TOKEN = ConfigProperty("access_token", None, "GCS: an OAuth access token", secret=True)
ANONYMOUS = ConfigProperty("anonymous", False, "GCS: no credentials (a public bucket or an "
                           "emulator)")  # fmt: skip
ACCOUNT_NAME = ConfigProperty("account_name", None, "Azure: the storage account; none: the "
                              "one the path names (container@account.dfs...)")  # fmt: skip
ACCOUNT_KEY = ConfigProperty(
    "account_key", None, "Azure: the account key; none: AZURE_STORAGE_ACCOUNT_KEY or "
    "AZURE_STORAGE_KEY, when no other credential is given", secret=True,
)  # fmt: skip
SAS_TOKEN = ConfigProperty(
    "sas_token", None, "Azure: a shared access signature; none: AZURE_STORAGE_SAS_TOKEN, when "
    "no other credential is given", secret=True,
)  # fmt: skip
CLIENT_ID = ConfigProperty("client_id", None, "Azure: a service principal's client id")
CLIENT_SECRET = ConfigProperty("client_secret", None, "Azure: its secret", secret=True)
TENANT_ID = ConfigProperty("tenant_id", None, "Azure: its tenant")
BLOB_STORAGE_AUTHORITY = ConfigProperty(
    "blob_storage_authority", None, "Azure: the blob endpoint: a cloud's domain after the "
    "account (`.blob.core.chinacloudapi.cn`) or an emulator's host (`127.0.0.1:10000`)",
)  # fmt: skip
BLOB_STORAGE_SCHEME = ConfigProperty("blob_storage_scheme", "https",
                                     "Azure: http or https, for that endpoint")  # fmt: skip
TIMEOUTS = ConfigProperty(
    "<name>" + TIMEOUT_SUFFIX, None, "any store: a timeout of pyarrow's, in seconds "
    "(connect_timeout, request_timeout)",
)  # fmt: skip

STORAGE_OPTIONS: tuple[ConfigProperty, ...] = (
    ENDPOINT_OVERRIDE, SCHEME, REGION, ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, ROLE_ARN,
    EXTERNAL_ID, ACCESS_TOKEN, ANONYMOUS, ACCOUNT_NAME, ACCOUNT_KEY, SAS_TOKEN, CLIENT_ID,
    CLIENT_SECRET, TENANT_ID, BLOB_STORAGE_AUTHORITY, BLOB_STORAGE_SCHEME, TIMEOUTS,
)  # fmt: skip
# Credentials: they travel to Spark tasks with the `FileIO`, but are never written anywhere.
SECRETS = frozenset(prop.key for prop in STORAGE_OPTIONS if prop.secret)
