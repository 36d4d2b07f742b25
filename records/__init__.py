"""TFRecord shards read record by record: the CRC scan and salvage shared by the ShardCheck
component, the Trainer and the commands that check their input (`verify`, `run`'s --data)."""
