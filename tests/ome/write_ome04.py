"""Run by the reference venv's Python: ome-zarr-py writes an NGFF 0.4 image (Zarr v2) with labels
at argv[1]; prints its metadata and every level's pixels as zarr-python reads them, as JSON."""

import json
import sys

import numpy as np
import zarr
from ome_zarr.format import FormatV04
from ome_zarr.scale import Methods
from ome_zarr.writer import write_image, write_labels

path = sys.argv[1]
rng = np.random.default_rng(4)
data = rng.integers(0, 1000, (2, 5, 64, 48)).astype("uint16")
root = zarr.open_group(path, mode="w", zarr_format=2)
write_image(data, root, scale_factors=[2, 4], fmt=FormatV04(), axes="czyx", method=Methods.NEAREST,
            storage_options={"chunks": (1, 2, 32, 32)})
labels = (data[0] > 500).astype("uint8")
write_labels(labels[np.newaxis], root, name="mask", fmt=FormatV04(), axes="czyx", scale_factors=[2, 4],
             method=Methods.NEAREST, label_metadata={"colors": [{"label-value": 1, "rgba": [255, 0, 0, 255]}]})
g = zarr.open_group(path, mode="r")
ms = g.attrs["multiscales"][0]
levels = [g[d["path"]][...].tolist() for d in ms["datasets"]]
lms = g["labels/mask"].attrs["multiscales"][0]
mask = g["labels/mask"][lms["datasets"][0]["path"]][...].tolist()
print(json.dumps({"data": data.tolist(), "multiscale": ms, "levels": levels, "mask": mask}))
