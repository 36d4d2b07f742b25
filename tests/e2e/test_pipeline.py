"""The whole pipeline, in process: real Beam, real ML Metadata, real training.

Data: 40 scikit-learn digits per class (400 PNGs) plus a corrupt JPEG and a text file, a digit
stored sideways with EXIF orientation 6 and a BMP digit; the shared first run stores them as gzip
raw pixels in 0.01 MB shards (tests/conftest.py).
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import PIL.Image
import pytest
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.utils import io_utils

from cli import main as cli_main
from components.prediction_csv import predictions as prediction_logs
import config as cfg
from contracts import evaluation as evaluation_names
from contracts.errors import EXIT_FAILED
from contracts.trainer_options import TrainerOptions
from metadata import artifact_reader, lineage, run_reader
from metadata.run_result import RunResult
import pipeline
from reporting import summary_text
from tests.conftest import (
  BMP_IMAGE,
  COPIED_IMAGE,
  FAST,
  FILED_TWICE,
  INFER_ROWS,
  PHONE_PHOTO,
  ROOT,
  TABULAR_CONFLICTS,
  TABULAR_COPIES,
  UNLABELED_IMAGES,
  UNLABELED_PNGS,
  run_pipeline,
  write_digits_subset,
)

pytestmark = pytest.mark.slow  # whole pipeline runs (make test-fast leaves them out)


def test_run_trains_blesses_and_pushes(first_run):
  code, result, output, _ = first_run
  assert code == 0, result.get('error')
  # 400 PNGs, a JPEG, a BMP and a copy; a copy in another class and its original left out
  assert sum(result['examples_per_split'].values()) == 402
  assert set(result['examples_per_split']) == {'train', 'eval'}
  assert result['eval_accuracy'] > 0.3  # 10 classes: chance is 0.1
  assert result['blessed'] is True
  assert os.path.isfile(os.path.join(result['pushed_to'], 'saved_model.pb'))
  assert result['executed'] == sorted(result['components']) and not result['cached']


def test_copies_share_a_split_and_one_image_in_two_classes_is_named(first_run, images_with_junk):
  _, result, _, _ = first_run
  found = result['duplicates']  # the Examples artifact's properties in ML Metadata
  assert found['label_conflicts'] == 2 and not found['conflicts_kept']
  assert found['duplicates'] >= 6  # the copy, the BMP and the image filed twice, with originals
  summary = summary_text.render(RunResult.from_json(result))
  lines = [line for line in summary if line.startswith('duplicates: ')]
  assert len(lines) == 1 and f'{FILED_TWICE} (8)' in lines[0]
  # Every image run says which near-copies it does not catch (found[...]: the Examples hold images).
  assert found['near_copies_checked'] and ' ' * 12 + summary_text.NEAR_COPIES_MEASURED in summary
  split_of = {}
  for split in ('train', 'eval'):
    shards = tf.io.gfile.glob(os.path.join(result['examples_uri'], f'Split-{split}', '*'))
    for record in tf.data.TFRecordDataset(shards, compression_type='GZIP'):
      feature = tf.train.Example.FromString(record.numpy()).features.feature
      split_of[feature['image_id'].bytes_list.value[0].decode()] = split
  for copy in (COPIED_IMAGE, BMP_IMAGE):
    folder = copy.split('/')[0]
    first = f'{folder}/{sorted(os.listdir(os.path.join(images_with_junk, folder)))[0]}'
    assert split_of[copy] == split_of[first], copy
  assert FILED_TWICE not in split_of
  with open(result['report'], encoding='utf-8') as f:
    page = f.read()
  section = page[page.index('id="duplicates"') :]
  assert 'The same content under two labels' in section
  assert section.count('src="data:image/png;base64,') >= 2  # both images of the conflict


def test_tfma_records_recall_per_class_and_a_confusion_matrix(first_run):
  import tensorflow_model_analysis as tfma

  _, result, output, _ = first_run
  assert list(result['class_recall']) == [str(i) for i in range(10)]  # labels.txt's names
  assert all(0 <= recall <= 1 for recall in result['class_recall'].values())
  (evaluation,) = run_reader.open_store(
    os.path.join(output, 'metadata.sqlite')
  ).get_artifacts_by_type('ModelEvaluation')
  recorded = artifact_reader.per_class(evaluation)[evaluation_names.CANDIDATE]
  assert recorded['recall'] == list(result['class_recall'].values())
  assert len(recorded['precision']) == 10
  (plots,) = [p for p in tfma.load_plots(evaluation.uri) if not p.slice_key.single_slice_keys]
  (matrix,) = [
    v.value.multi_class_confusion_matrix_at_thresholds.matrices[0]
    for v in plots.plot_keys_and_values
  ]
  assert (
    sum(e.num_weighted_examples for e in matrix.entries) == result['examples_per_split']['eval']
  )
  # Recall is the top-class recall: the matrix's diagonal over its row (top_class_metrics.py).
  rows, hits = [0.0] * 10, [0.0] * 10
  for entry in matrix.entries:
    rows[entry.actual_class_id] += entry.num_weighted_examples
    if entry.actual_class_id == entry.predicted_class_id:
      hits[entry.actual_class_id] += entry.num_weighted_examples
  assert recorded['recall'] == pytest.approx([h / n for h, n in zip(hits, rows)])


def test_shards_are_checked_before_training_and_the_model_records_it(first_run):
  _, result, output, _ = first_run
  assert result['components']['ShardCheck'] == 'COMPLETE'
  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  (model,) = store.get_artifacts_by_type('Model')
  properties = model.custom_properties
  assert properties['input_corrupt_records'].int_value == 0
  assert properties['input_damaged_shards'].int_value == 0
  assert properties['input_lost_fraction'].double_value == 0.0
  (model_run,) = store.get_artifacts_by_type('ModelRun')
  with open(os.path.join(model_run.uri, 'input_damage.json')) as f:
    damage = json.load(f)
  assert damage['good'] == sum(result['examples_per_split'].values()) and damage['damaged'] == []
  # read against what the ExampleGen recorded (records/damage.py): nothing missing
  assert damage['read'] == damage['recorded'] == result['examples_per_split']
  assert damage['missing'] == 0 and properties['input_missing_records'].int_value == 0
  assert 'trainer_read' not in result


def test_the_first_run_stored_gzip_raw_pixels_in_small_shards(first_run):
  _, result, _, _ = first_run
  shards = sorted(tf.io.gfile.glob(os.path.join(result['examples_uri'], 'Split-train', '*')))
  assert [os.path.basename(s) for s in shards] == [
    'data-00000-of-00002.gz',
    'data-00001-of-00002.gz',
  ]
  records = sum(1 for _ in tf.data.TFRecordDataset(shards, compression_type='GZIP'))
  assert records == result['examples_per_split']['train']


def test_exclusion_report_and_label_vocabulary(first_run, images_with_junk):
  _, result, _, _ = first_run
  assert result['excluded_files'] == 4  # 2 junk, and an image filed as a 2 and as an 8
  with open(result['excluded_report']) as f:
    rows = {row['path']: row['reason'] for row in csv.DictReader(f)}
  first_two = f'2/{sorted(os.listdir(os.path.join(images_with_junk, "2")))[0]}'
  assert set(rows) == {'3/broken.jpg', '1/notes.txt', FILED_TWICE, first_two}
  assert f'{FILED_TWICE} (8)' in rows[first_two] and f'{first_two} (2)' in rows[FILED_TWICE]
  assert rows['3/broken.jpg'].startswith('cannot decode image')
  assert 'not an image file' in rows['1/notes.txt']
  with open(os.path.join(result['examples_uri'], 'labels.txt')) as f:
    assert f.read().split() == [str(i) for i in range(10)]
  # The BMP is read (not excluded), the sideways phone photo turned upright and counted.
  assert result['turned_upright'] == 1
  assert any(
    line.endswith('; 1 photo(s) turned upright by their EXIF orientation')
    for line in summary_text.render(RunResult.from_json(result))
  )
  with open(os.path.join(result['examples_uri'], 'image_meta.json')) as f:
    assert json.load(f)['num_turned_upright'] == 1
  shards = tf.io.gfile.glob(os.path.join(result['examples_uri'], 'Split-*', '*'))
  stored = {}
  for record in tf.data.TFRecordDataset(shards, compression_type='GZIP'):
    example = tf.train.Example.FromString(record.numpy())
    image_id = example.features.feature['image_id'].bytes_list.value[0].decode()
    if image_id in (PHONE_PHOTO, BMP_IMAGE):
      stored[image_id] = np.frombuffer(
        example.features.feature['image'].bytes_list.value[0], np.uint8
      ).reshape(8, 8)
  assert set(stored) == {PHONE_PHOTO, BMP_IMAGE}
  with PIL.Image.open(os.path.join(images_with_junk, PHONE_PHOTO)) as sideways:
    sideways = np.asarray(sideways, np.float64)
  upright = np.rot90(sideways, -1)  # a quarter clockwise, as orientation 6 says
  assert (
    np.abs(stored[PHONE_PHOTO] - upright).mean() < np.abs(stored[PHONE_PHOTO] - sideways).mean()
  )


def test_anomalies_stop_before_training(tmp_path, capsys):
  data = write_digits_subset(str(tmp_path / 'data'), per_class=8)
  os.makedirs(os.path.join(data, 'x'))  # an 11th class (label 10): upside-down 7s, not copies
  for name in os.listdir(os.path.join(data, '7')):
    with PIL.Image.open(os.path.join(data, '7', name)) as seven:
      seven.transpose(PIL.Image.FLIP_TOP_BOTTOM).save(os.path.join(data, 'x', name))
  code, result = run_pipeline(data, str(tmp_path / 'out'), '--schema', cfg.DIGITS_SCHEMA)
  captured = capsys.readouterr()
  assert code == EXIT_FAILED
  assert any("feature 'label'" in a for a in result['anomalies'])
  assert any("feature 'label_name'" in a for a in result['anomalies'])
  assert "feature 'label'" in captured.out and 'stopped before training' in captured.err
  assert 'Trainer' not in result['components']
  store = run_reader.open_store(str(tmp_path / 'out' / 'metadata.sqlite'))
  assert not store.get_artifacts_by_type('Model')


def test_rows_without_a_label_stop_the_run_unless_label_default_says_what_they_mean(
  tabular_run, tmp_path, capsys
):
  data = tabular_run[3]
  assert cli_main.main(['run', '--data', data, '--output', str(tmp_path), '--label', 'tips']) == 2
  assert '4 of the first 200 rows' in capsys.readouterr().err


def test_csv_trains_a_tabular_model_from_the_latest_span_and_version(tabular_run):
  code, latest, output, _ = tabular_run
  assert code == 0, latest.get('error')
  # 1,700 rows and TABULAR_COPIES copies; TABULAR_CONFLICTS rows and their relabelled copies out
  rows = 1700 + TABULAR_COPIES - TABULAR_CONFLICTS
  assert latest['span'] == 2 and sum(latest['examples_per_split'].values()) == rows
  found = latest['duplicates']
  assert found['label_conflicts'] == 2 * TABULAR_CONFLICTS and not found['conflicts_kept']
  assert found['duplicates'] >= 2 * (TABULAR_COPIES + TABULAR_CONFLICTS)
  assert len(found['conflicts']) == 3 and all(
    c['row'].startswith('trips.csv: ') for c in found['conflicts']
  )
  assert latest['eval_accuracy'] > 0.6 and latest['blessed']
  assert list(latest['class_recall']) == ['0', '1']  # tips > 0: no, yes
  assert latest['training']['label'] == 'tips > 0 as two classes (--label-threshold 0)'
  assert latest['serving_check']['serves']  # predict_columns agreed with serving_default
  assert 'predict_columns' in latest['serving_check']['signatures']
  with open(latest['report'], encoding='utf-8') as f:
    page = f.read()
  assert 'payment_type = Cash' in page and 'payment_type = Credit Card' in page  # per slice
  assert 'The same content under two labels' in page
  assert (
    'aria-label="numeric feature histograms"' in page and 'aria-label="recall per class"' in page
  )
  assert 'aria-label="sample images per class"' not in page  # tabular data: no images to show
  assert '<h3>Each column alone</h3>' in page
  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  model_run = max(store.get_artifacts_by_type('ModelRun'), key=lambda a: a.id)
  with open(os.path.join(model_run.uri, 'training.json')) as f:
    alone = json.load(f)['single_feature_scores']
  # Cash tips go unrecorded: payment_type alone nearly gives tips > 0, and is a fair column.
  assert max(alone, key=alone.get) == 'payment_type' and 0.9 < alone['payment_type'] < 0.99
  # Raw values by column name: every value missing (NaN, '') answers as a record with no feature.
  served = tf.saved_model.load(latest['pushed_to']).signatures
  columns = served['predict_columns'].structured_input_signature[1]
  assert {'payment_type', 'trip_miles'} <= set(columns) and 'tips' not in columns
  missing = {
    name: tf.constant([float('nan')] if spec.dtype.is_floating else [''], spec.dtype)
    for name, spec in columns.items()
  }
  np.testing.assert_allclose(
    served['predict_columns'](**missing)['probabilities'].numpy(),
    served['serving_default'](examples=tf.constant([b'']))['probabilities'].numpy(),
    rtol=1e-6,
  )
  # --infer-data: the blessed model scored the unlabeled rows (BulkInferrer → predictions.csv).
  inferred = latest['inferred']
  assert inferred['inputs'] == INFER_ROWS
  assert os.listdir(inferred['inference_result'])  # the InferenceResult's PredictionLogs
  with open(inferred['csv'], newline='', encoding='utf-8') as f:
    rows = list(csv.DictReader(f))
  assert len(rows) == INFER_ROWS and len({row['id'] for row in rows}) == INFER_ROWS
  with open(latest['log']) as f:  # BulkInferrer's live progress ends with every row scored
    assert re.search(rf'BulkInferrer: {INFER_ROWS} of {INFER_ROWS} examples inferred, ', f.read())
  records = [
    prediction_logs.log_example(log)
    for log in prediction_logs.read_logs(inferred['inference_result'])
  ]
  assert not any('tips' in tf.train.Example.FromString(r).features.feature for r in records)
  expected = served['serving_default'](examples=tf.constant(records))['probabilities'].numpy()
  for row, probabilities in zip(rows, expected):
    top = [float(pair.split('=')[1]) for pair in row['top_k'].split(';')]
    assert all(0 <= p <= 1 for p in top) and 0 <= float(row['probability']) <= 1
    assert row['class'] == str(int(np.argmax(probabilities)))
    np.testing.assert_allclose(float(row['probability']), probabilities.max(), rtol=1e-5)
  # Pinning a span (--span) goes through the same driver: the image test below runs it.
  traced = lineage.trace(os.path.join(output, 'metadata.sqlite'))['data_versions']
  versions = {(v['span'], v['version']) for v in traced if v['producer'] != 'InferExampleGen'}
  assert versions == {(2, 2)}
  (scored,) = [v for v in traced if v['producer'] == 'InferExampleGen']  # lineage sees it too
  assert scored['uri'] == inferred['examples_uri']


def test_schema_command_writes_an_inferred_schema(digits_subset, tmp_path):
  out = tmp_path / 'schema' / 'schema.pbtxt'
  code = cli_main.main(
    ['schema', '--data', digits_subset, '--output', str(tmp_path / 'o'), '--out', str(out)]
  )
  assert code == 0
  schema = io_utils.parse_pbtxt_file(str(out), schema_pb2.Schema())
  assert {f.name for f in schema.feature} == {
    'image',
    'label',
    'label_name',
    'image_id',
    'height',
    'width',
    'channels',
    'schema_version',
  }


def test_image_options_reach_the_example_gen_and_the_trainer_config(tmp_path):
  config = cfg.PipelineConfig(
    data=str(tmp_path),
    data_kind=cfg.IMAGES,
    output=str(tmp_path),
    trainer=TrainerOptions(augment=True, input_cache='off'),
    max_image_side=300,
  )
  components = {c.id: c for c in pipeline.create_pipeline(config).components}
  trainer_config = json.loads(components['Trainer'].exec_properties['custom_config'])
  assert trainer_config['augment'] is True and trainer_config['input_cache'] == 'off'
  assert components['ImageExampleGen'].exec_properties['max_image_side'] == 300


def test_infer_data_images_any_depth_are_scored_as_their_served_records(first_run):
  _, result, _, unlabeled = first_run
  inferred = result['inferred']
  assert inferred['inputs'] == UNLABELED_IMAGES and inferred['turned_upright'] == 1
  assert inferred['skipped'] == 2  # the corrupt JPEG and the text file, listed
  with open(inferred['skipped_report']) as f:
    assert {row['path'] for row in csv.DictReader(f)} == {'phone/broken.jpg', 'notes.txt'}
  (line,) = [
    line
    for line in summary_text.render(RunResult.from_json(result))
    if line.startswith('inferred:')
  ]
  assert line.endswith(f'2 file(s) skipped (see {inferred["skipped_report"]})')
  with open(inferred['csv'], newline='', encoding='utf-8') as f:
    rows = {row['id']: row for row in csv.DictReader(f)}
  scored = sorted(
    os.path.relpath(os.path.join(d, n), unlabeled)
    for d, _, names in os.walk(unlabeled)
    for n in names
    if n not in ('broken.jpg', 'notes.txt')
  )
  assert sorted(rows) == scored  # ids: paths below --infer-data, any depth
  served = tf.saved_model.load(result['pushed_to']).signatures
  logs = list(prediction_logs.read_logs(inferred['inference_result']))
  records = [prediction_logs.log_example(log) for log in logs]
  assert not any('label' in tf.train.Example.FromString(r).features.feature for r in records)
  # 8x8 records as the model was trained on and 16x16 colour ones: serving_default fits both.
  answer = served['serving_default'](examples=tf.constant(records))
  for record, probabilities, name in zip(
    records, answer['probabilities'].numpy(), answer['class_names'].numpy()
  ):
    row = rows[
      tf.train.Example.FromString(record).features.feature['image_id'].bytes_list.value[0].decode()
    ]
    assert row['class'] == name.decode() and row['class'] in [str(i) for i in range(10)]
    np.testing.assert_allclose(float(row['probability']), probabilities.max(), rtol=1e-5)
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-5)
  # What a serving client sending the PNG file itself gets.
  for i in range(UNLABELED_PNGS):
    with open(os.path.join(unlabeled, f'new-{i:02d}.png'), 'rb') as f:
      sent = served['predict_image_bytes'](image_bytes=tf.constant([f.read()]))
    assert rows[f'new-{i:02d}.png']['class'] == sent['class_names'].numpy()[0].decode()


def test_lineage_names_the_data_that_trained_the_pushed_model(
  first_run, images_with_junk, tmp_path, capsys
):
  _, result, output, unlabeled = first_run
  answer_file = tmp_path / 'lineage.json'
  assert (
    cli_main.main(
      ['lineage', '--output', output, '--model', result['pushed_to'], '--json', str(answer_file)]
    )
    == 0
  )
  assert f'from {images_with_junk}' in capsys.readouterr().out
  report = json.loads(answer_file.read_text())
  trained, scored = (
    [v for v in report['data_versions'] if (v['producer'] == 'InferExampleGen') == infer]
    for infer in (False, True)
  )
  (version,) = trained  # the cached re-run reused it: still one
  assert scored[0]['input_base'] == unlabeled and scored[0]['split_counts'] == {
    'infer': UNLABELED_IMAGES
  }
  (model,) = report['models']
  assert report['answer']['trained_on'] == version and model['trained_on'] == version['examples_id']
  assert version['uri'] == result['examples_uri'] and version['input_base'] == images_with_junk
  assert version['split_counts'] == result['examples_per_split']
  assert version['fingerprint'].startswith('split:images,num_files:')
  (evaluation,) = model['evaluations']
  assert evaluation['evaluated_on'] == version['examples_id'] and evaluation['blessed'] is True
  assert evaluation['accuracy'] == pytest.approx(result['eval_accuracy'])
  assert model['pushed_to'] == [result['pushed_to']]


def test_lineage_bad_input_is_one_line(first_run, tmp_path, capsys):
  _, _, output, _ = first_run
  assert cli_main.main(['lineage', '--output', output, '--model', str(tmp_path)]) == 2
  assert 'no model in this output folder' in capsys.readouterr().err
  assert cli_main.main(['lineage', '--output', str(tmp_path)]) == 2
  err = capsys.readouterr().err
  assert err.startswith('error: ') and err.count('\n') == 1 and 'no metadata.sqlite' in err


def test_spans_latest_or_pinned_traced_and_a_drifted_new_span_stops_before_training(
  tmp_path, capsys
):
  """One output folder through three data versions (span folders), as data arrives."""
  schema = tmp_path / 'schema.pbtxt'
  curated = open(cfg.DIGITS_SCHEMA).read()
  schema.write_text(
    curated.replace(
      'name: "label_name"\n  type: BYTES\n',
      'name: "label_name"\n  type: BYTES\n  drift_comparator { infinity_norm { threshold: 0.1 } }\n',
      1,
    )
  )
  data = tmp_path / 'versions'
  write_digits_subset(str(data / 'span-1'), per_class=6)
  write_digits_subset(str(data / 'span-2'), per_class=9)
  output = str(tmp_path / 'out')
  code, latest = run_pipeline(str(data), output, '--schema', str(schema))
  assert code == 0, latest.get('error')
  assert latest['span'] == 2 and sum(latest['examples_per_split'].values()) == 90
  assert latest['components']['DriftCheck'] == 'COMPLETE'  # nothing before it to compare with
  # An older, smaller span trains a model that may fall behind the serving one: not compared here.
  pinned_args = ('--schema', str(schema), '--max-accuracy-drop', '1')
  code, pinned = run_pipeline(str(data), output, '--span', '1', *pinned_args)
  assert code == 0, pinned.get('error')
  assert pinned['span'] == 1 and sum(pinned['examples_per_split'].values()) == 60
  capsys.readouterr()
  answer_file = tmp_path / 'lineage.json'
  assert cli_main.main(['lineage', '--output', output, '--json', str(answer_file)]) == 0
  report = json.loads(answer_file.read_text())
  span_of = {v['examples_id']: v['span'] for v in report['data_versions']}
  assert sorted(span_of.values()) == [1, 2]
  assert sorted(span_of[m['trained_on']] for m in report['models']) == [1, 2]
  assert cli_main.main(['run', '--data', str(data), '--output', output, '--span', '3']) == 2
  assert 'no span-3 folder (spans: 1, 2)' in capsys.readouterr().err

  # Span 3 has only digits 0-2: label_name's distribution moves by L-inf 0.23 > 0.1.
  write_digits_subset(str(data / 'span-3'), per_class=8)
  for digit in range(3, 10):
    shutil.rmtree(data / 'span-3' / str(digit))
  code, drifted = run_pipeline(str(data), output, '--schema', str(schema))
  err = capsys.readouterr().err
  assert code == 1 and drifted['span'] == 3
  assert 'data drift against the previous data version' in err and "'label_name'" in err
  assert drifted['components']['DriftCheck'] == 'FAILED' and 'Trainer' not in drifted['executed']
  store = run_reader.open_store(os.path.join(output, 'metadata.sqlite'))
  assert len(store.get_artifacts_by_type('Model')) == 2  # spans 1 and 2
  with open(drifted['report'], encoding='utf-8') as f:
    page = f.read()
  section = lambda name: re.search(f'<section id="{name}">(.*?)</section>', page, re.S).group(1)
  assert 'data drift against the previous data version' in section('anomalies')
  assert 'class="absent"' in section('training') and 'class="absent"' in section('evaluation')
  assert 'span</th>' in section('lineage') and '<svg' in section('examples')


def test_damaged_tfrecords_with_class_names_lose_only_the_damaged_records(tmp_path, capsys):
  """A user's TFRecords whose label holds class names (the commonest classification data), two
  records damaged: those two are lost, the classes are learned and served by name.
  (Gzip TFRecords through ImportExampleGen: tests/e2e/test_pipeline_sequences.py.)"""
  from tests.support import shards

  rng = np.random.default_rng(5)
  names = ['setosa', 'versicolor', 'virginica']

  def record(i):
    k = i % 3
    feature = {
      'petal_length': tf.train.Feature(
        float_list=tf.train.FloatList(value=[k * 2 + rng.normal(0, 0.3)])
      ),
      'petal_width': tf.train.Feature(
        float_list=tf.train.FloatList(value=[k + rng.normal(0, 0.2)])
      ),
      'species': tf.train.Feature(bytes_list=tf.train.BytesList(value=[names[k].encode()])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

  data = tmp_path / 'data'
  data.mkdir()
  second = [record(j) for j in range(150)]
  relabelled = tf.train.Example.FromString(second[7])
  species = relabelled.features.feature['species'].bytes_list.value
  species[0] = names[(names.index(species[0].decode()) + 1) % 3].encode()
  second += [second[3], second[4], relabelled.SerializeToString()]  # two copies, one relabelled
  paths = [
    shards.write_shard(str(data / 'part-0.tfrecord'), [record(j) for j in range(150)]),
    shards.write_shard(str(data / 'part-1.tfrecord'), second),
  ]
  with open(paths[0], 'rb') as f:
    clean = f.read()
  for index in (0, 70):  # the first record too: the reader's kind check must see past it
    shards.damage(paths[0], shards.record_offset(clean, index) + 14)  # data CRC fails
  with open(paths[0], 'rb') as f:
    damaged = f.read()
  code, result = run_pipeline(str(data), str(tmp_path / 'out'), '--label', 'species')
  assert code == 0, result.get('error')
  assert result['components']['ImportExampleGen'] == 'COMPLETE'
  assert result['input_damage']['corrupt'] == 2 and result['input_damage']['damaged_shards'] == 1
  # 303 written, 2 damaged, a record and its relabelled copy left out
  assert sum(result['examples_per_split'].values()) == 299
  assert result['duplicates']['label_conflicts'] == 2 and result['duplicates']['duplicates'] == 6
  with open(result['log']) as f:  # ImportExampleGen's progress: the salvaged copy's records
    assert 'ImportExampleGen: 301 of 301 records imported, ' in f.read()
  out = capsys.readouterr().out
  assert 'input:      2 damaged record(s) dropped from 1 of 2 file(s)' in out
  assert '2 example(s) whose content is filed under two labels, left out of both splits' in out
  with open(paths[0], 'rb') as f:
    assert f.read() == damaged  # the user's files are left as they are
  assert sorted(result['class_recall']) == names and result['eval_accuracy'] > 0.8
  assert result['serving_check']['problems'] == []
  served = tf.saved_model.load(result['pushed_to']).signatures['predict_columns'](
    petal_length=tf.constant([0.0, 4.0], tf.float64),
    petal_width=tf.constant([0.0, 2.0], tf.float64),
  )
  assert served['class_names'].numpy().tolist() == [b'setosa', b'virginica']


def test_a_full_disk_is_one_line_naming_the_folder(tmp_path, capsys):
  small = tmp_path / 'small'
  small.mkdir()
  mounted = subprocess.run(
    ['mount', '-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', str(small)], capture_output=True, text=True
  )
  if mounted.returncode != 0:
    pytest.skip(f'no 2 MB file system to fill: mount says {mounted.stderr.strip()!r}')
  try:
    data = write_digits_subset(str(tmp_path / 'data'), per_class=3)
    code = cli_main.main(['run', '--data', data, '--output', str(small / 'out'), *FAST])
    err = capsys.readouterr().err
  finally:
    subprocess.run(['umount', '--lazy', str(small)], check=True)  # the run's lock file is open
  assert code == EXIT_FAILED
  (line,) = err.splitlines()
  assert line.startswith(f'error: no space left on the disk of {small}/out/pipeline_root (')
  assert 'free some space or give another --output (full log: ' in line


_BUILD_AND_LIST = """
import sys
import config as cfg
import pipeline
pipeline.create_pipeline(cfg.PipelineConfig(sys.argv[1], cfg.IMAGES, sys.argv[2]))
unused = ('tfx.v1', 'google.cloud.aiplatform', 'kfp')  # the Vertex AI client, KFP's compiler
print(sorted(name for name in unused if name in sys.modules))
"""


def test_building_a_local_pipeline_imports_no_cloud_client(tmp_path):
  """The DAG of a local run is built from the TFX modules it uses: not tfx.v1, whose import
  pulls in the Vertex AI client (~1.5 s a run) and KFP (pipeline.py imports them only for a
  pipeline that trains or tunes on Vertex AI)."""
  done = subprocess.run(
    [sys.executable, '-c', _BUILD_AND_LIST, str(tmp_path / 'data'), str(tmp_path / 'out')],
    cwd=ROOT,
    capture_output=True,
    text=True,
    timeout=300,
  )
  assert done.returncode == 0, done.stderr[-2000:]
  assert done.stdout.splitlines()[-1] == '[]'
