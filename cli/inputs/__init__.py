"""What `--data` (and `--infer-data`) is: the ExampleGen, file pattern, spans and splits it
resolves to, its CSV columns and labels, first TFRecords, image folders, salvage of a damaged
TFRecord input, and the embedded digits of a run without `--data`."""
