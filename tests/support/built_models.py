"""Built-in models as tests use them: compiled, at their default hyperparameters."""

import tensorflow as tf

from contracts import artifacts, text_record
from trainer import model
from trainer.data_spec import SequenceSpec

TEXT_WORDS = ('good', 'bad', "isn't", 'film')  # ids 2 to 5, after the reserved tokens


def built_in(name: str, spec, learning_rate: float = 1e-3, jit_compile: bool = False):
  """The built-in model `name` (trainer/models/) for `spec`, compiled."""
  module = model.load(name)
  built = model.build(module, name, spec, model.hyperparameters(module, name, learning_rate))
  loss = model.regression_loss(module, name, '') if getattr(spec, 'regression', False) else ''
  return model.compile_model(built, learning_rate, jit_compile, regression_loss=loss)


def text_model(folder):
  """(bag_of_words compiled, its SequenceSpec) over a vocabulary file written in `folder`: the
  reserved tokens, then TEXT_WORDS."""
  words = list(text_record.RESERVED) + list(TEXT_WORDS)
  vocabulary = folder / artifacts.VOCABULARY_FILE
  vocabulary.write_text(''.join(w + '\n' for w in words), encoding='utf-8')
  spec = SequenceSpec(
    text_record.LABEL_KEY,
    text_record.TOKENS_KEY,
    tf.int64,
    ['neg', 'pos'],
    len(words),
    hashed=False,
    vocabulary=str(vocabulary),
  )
  return built_in('bag_of_words', spec), spec
