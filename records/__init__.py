"""TFRecord shards read record by record: the CRC scan and salvage shared by the ShardCheck
component, the Trainer and the commands that check their input (`verify`, `run`'s --data); and
the record layouts of contracts/ as TensorFlow writes and parses them (image_codec, text_codec)."""
