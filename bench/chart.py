"""A bar chart PNG drawn with Pillow (no plotting library in the lock file)."""

from typing import Dict, List

import PIL.Image
import PIL.ImageDraw

COLOURS = ['#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#937860', '#da8bc3', '#8c8c8c']


def bars(
  groups: Dict[str, Dict[str, float]],
  labels: Dict[str, Dict[str, str]],
  series: List[str],
  title: str,
  path: str,
  top: float,
) -> None:
  """groups[group][series] = bar height in [0, top]; labels[group][series] = text above it."""
  bar, gap, left, base, height = 34, 40, 60, 420, 340
  width = left + len(groups) * (len(series) * bar + gap) + 20
  image = PIL.Image.new('RGB', (max(width, 640), base + 90), 'white')
  draw = PIL.ImageDraw.Draw(image)
  draw.text((left, 10), title, fill='black')
  for tick in range(0, int(top * 10) + 1, 2):
    y = base - height * tick / 10 / top
    draw.line([(left - 5, y), (width - 10, y)], fill='#dddddd')
    draw.text((10, y - 6), f'{tick / 10:.1f}', fill='black')
  x = left + gap // 2
  for group, values in groups.items():
    for i, name in enumerate(series):
      if name in values:
        y = base - height * min(values[name], top) / top
        draw.rectangle([x, y, x + bar - 4, base], fill=COLOURS[i % len(COLOURS)])
        draw.text((x, y - 14), labels[group].get(name, ''), fill='black')
      x += bar
    draw.text((x - len(series) * bar, base + 8), group, fill='black')
    x += gap
  for i, name in enumerate(series):
    draw.rectangle(
      [left + i * 125, base + 40, left + i * 125 + 12, base + 52], fill=COLOURS[i % len(COLOURS)]
    )
    draw.text((left + i * 125 + 16, base + 40), name, fill='black')
  image.save(path)
