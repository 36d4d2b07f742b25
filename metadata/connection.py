"""Opens an output's ML Metadata store (SQLite): the one module that connects to ML Metadata.

ml_metadata is imported when a store is opened, not with this module, so that commands which
never open one (`--help`, bad input) do not pay for it.
"""


def open_read_only(metadata_path: str):
  """The store at metadata_path for reading; an error when there is none."""
  return _open(metadata_path, 'READONLY')


def open_read_write(metadata_path: str):
  """The store at metadata_path for reading and writing; an error when there is none."""
  return _open(metadata_path, 'READWRITE')


def open_or_create(metadata_path: str):
  """The store at metadata_path for reading and writing, created when there is none."""
  return _open(metadata_path, 'READWRITE_OPENCREATE')


def connection_config(metadata_path: str, mode: str = 'READWRITE_OPENCREATE'):
  """The ConnectionConfig of the SQLite store at metadata_path (by default created when there is
  none: what a pipeline run hands to TFX's runner)."""
  from ml_metadata.proto import metadata_store_pb2

  connection = metadata_store_pb2.ConnectionConfig()
  connection.sqlite.filename_uri = metadata_path
  connection.sqlite.connection_mode = getattr(metadata_store_pb2.SqliteMetadataSourceConfig, mode)
  return connection


def _open(metadata_path: str, mode: str):
  from ml_metadata.metadata_store import metadata_store

  return metadata_store.MetadataStore(connection_config(metadata_path, mode))
