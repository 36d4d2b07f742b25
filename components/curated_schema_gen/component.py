"""CuratedSchemaGen: TFX's ImportSchemaGen (same executor: the file is copied into a Schema
artifact) with the schema file's content in the cache key.

ImportSchemaGen's only parameter is the file's path, so an edited schema.pbtxt would be served
from the cache; `code_fingerprint` (utils/fingerprint.py) changes with the content.
"""

from tfx.components.schema_gen.import_schema_gen import executor
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs

from components import specs


class CuratedSchemaGenSpec(component_spec.ComponentSpec):
  PARAMETERS = specs.parameters(standard_component_specs.ImportSchemaGenSpec)
  INPUTS = {}
  OUTPUTS = standard_component_specs.ImportSchemaGenSpec.OUTPUTS


class CuratedSchemaGen(base_component.BaseComponent):
  SPEC_CLASS = CuratedSchemaGenSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

  def __init__(self, schema_file: str, code_fingerprint: str):
    super().__init__(
      spec=CuratedSchemaGenSpec(
        schema_file=schema_file,
        code_fingerprint=code_fingerprint,
        schema=channel.Channel(type=standard_artifacts.Schema),
      )
    )
