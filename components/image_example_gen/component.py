"""ImageExampleGen: a TFX component turning a class-per-folder image tree into TFRecords.

It is a FileBasedExampleGen with its own spec and executor, so TFX's FileBasedDriver (the input
files' fingerprint of sizes and mtimes, span and version) decides caching exactly as for the stock
CsvExampleGen/ImportExampleGen, both under LocalDagRunner and on Kubeflow Pipelines v2, whose
compiler attaches the driver only to FileBasedExampleGen subclasses.
"""

from tfx.components.example_gen.component import FileBasedExampleGen
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.proto import example_gen_pb2

from components import file_based
from components.image_example_gen import executor

# Files are matched one level below the root: <root>/<class>/<file or sub-folder>; with data
# versions, below the version's folder: <root>/span-<N>[/version-<M>]/<class>/<file>.
CLASS_FOLDER_PATTERN = '*/*'


class ImageExampleGenSpec(file_based.ExampleGenSpec):
  """FileBasedExampleGen's parameters plus the image options."""

  PARAMETERS = file_based.spec_parameters(
    encoding=str,
    compression=str,
    eval_percent=int,
    shard_size_mb=float,
    max_image_side=int,
    unlabeled_split=str,
    duplicates=str,
  )


class ImageExampleGen(FileBasedExampleGen):
  """Class-per-folder images → `Split-{train,eval}/data-NNNNN-of-NNNNN` TFRecord shards (or
  unlabeled images → `Split-<unlabeled_split>/…`)."""

  SPEC_CLASS = ImageExampleGenSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

  def __init__(
    self,
    input_base: str,
    encoding: str = 'encoded',
    compression: str = 'none',
    eval_percent: int = 20,
    shard_size_mb: float = 256.0,
    max_image_side: int = 0,
    pattern: str = CLASS_FOLDER_PATTERN,
    span: int = 0,
    unlabeled_split: str = '',
    duplicates: str = 'group',
    code_fingerprint: str = '',
  ):
    """Args:
    input_base: root of the tree; each sub-folder's name is a class label.
    encoding: 'encoded' keeps the JPEG/PNG bytes (re-encoded when EXIF-rotated or downscaled;
      WebP, BMP, GIF and TIFF stored as PNG), 'raw' stores uint8 pixels (upright).
    compression: 'none' (default: image payloads are already compressed) or 'gzip'.
    eval_percent: share of images (by content: components/duplicates.py) in the eval split.
    shard_size_mb: target size of one shard; small data gives one shard per split.
    max_image_side: store images whose longer side is above this downscaled to it, once
      (aspect kept); 0 keeps every image's size.
    pattern: '<class>/<file>' under input_base: '*/*', or with data versions
      'span-{SPAN}/*/*' or 'span-{SPAN}/version-{VERSION}/*/*' (the driver resolves them).
    span: with {SPAN} in the pattern, read span N; 0 = the latest.
    unlabeled_split: '' reads class folders; a split name reads every image below input_base
      (any depth, pattern '*') without labels into that one split (run --infer-data).
    duplicates: duplicates.MODES: 'group' keeps copies and near-copies in one split and leaves
      images filed under two labels out; 'keep-conflicts' keeps those too; 'off' splits by path.
    code_fingerprint: the executor's code (utils/fingerprint.py), for the cache key.
    """
    spec = ImageExampleGenSpec(
      **file_based.spec_arguments(
        input_base,
        'images',
        pattern,
        span,
        example_gen_pb2.FORMAT_TF_EXAMPLE,
        eval_percent,
        gzip=compression == 'gzip',
      ),
      encoding=encoding,
      compression=compression,
      eval_percent=eval_percent,
      shard_size_mb=float(shard_size_mb),
      max_image_side=int(max_image_side),
      unlabeled_split=unlabeled_split,
      duplicates=duplicates,
      code_fingerprint=code_fingerprint,
    )
    # FileBasedExampleGen.__init__ would build the stock spec; ours carries the image options.
    base_beam_component.BaseBeamComponent.__init__(self, spec=spec)
