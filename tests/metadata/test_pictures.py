"""metadata/pictures.py: names are drawn as they are written."""

import io

from metadata import pictures


def test_class_names_that_look_like_mathtext_are_drawn_as_text():
  names = ['$x_$', '$\\foo$', '$^$']  # matplotlib's mathtext fails on each of these
  for figure in (
    pictures.class_recall(names, [0.5, 1.0, None], [0.4, 0.9, 0.1]),
    pictures.confusion_matrix([[1, 0, 0], [0, 1, 0], [0, 0, 1]], names),
  ):
    drawn = io.BytesIO()
    figure.savefig(drawn, format='png')
    assert drawn.getvalue().startswith(b'\x89PNG')
    shown = [t.get_text() for axis in figure.axes for t in axis.get_xticklabels()]
    assert names[0] in shown
