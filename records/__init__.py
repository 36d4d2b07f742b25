"""The data files a run reads, looked at without TFX: TFRecord shards record by record (the CRC
scan and salvage shared by the ShardCheck component, the Trainer, `verify` and `run`'s --data),
class-per-folder image trees listed (shared by the ImageExampleGen and `--data`'s check); and
the record layouts of contracts/ as TensorFlow writes and parses them (image_codec, text_codec)."""
