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


def _open(metadata_path: str, mode: str):
  from ml_metadata.metadata_store import metadata_store
  from ml_metadata.proto import metadata_store_pb2

  connection = metadata_store_pb2.ConnectionConfig()
  connection.sqlite.filename_uri = metadata_path
  connection.sqlite.connection_mode = getattr(metadata_store_pb2.SqliteMetadataSourceConfig, mode)
  return metadata_store.MetadataStore(connection)
