#!/bin/bash
# torchvision 0.22.0 alone over torch 2.11 (no second copy): a venv whose
# site-packages links every entry of the image's, except torchvision.
T=$PWD/.gpu-carry/torchfix
rm -rf /tmp/tv; python3 -m venv /tmp/tv
SP=/opt/torch/.venv/lib/python3.12/site-packages
for e in $SP/*; do case $(basename $e) in torchvision*|pip|pip-*) ;; *) ln -s $e /tmp/tv/lib/python3.12/site-packages/ ;; esac; done
/tmp/tv/bin/pip install -q --no-index --no-deps .gpu-carry/torchvision-0.22.0-*.whl
/tmp/tv/bin/python -c "import torch, torchvision; print(torch.__version__, torchvision.__version__); import torchvision.ops; print(torchvision.ops.nms(torch.rand(4,4,device='cuda'), torch.rand(4,device='cuda'), 0.5))" > $OUT/import-tv022.txt 2>&1; echo "exit=$?" >> $OUT/import-tv022.txt
python3 - > $OUT/ldd-tv022.txt 2>&1 <<'PY'
import ctypes, glob, sys
sys.path.insert(0, '/tmp/tv/lib/python3.12/site-packages')
import torch
so = glob.glob('/tmp/tv/lib/python3.12/site-packages/torchvision/_C*.so')[0]
try:
    ctypes.CDLL(so)
    print('loaded', so)
except OSError as e:
    print('dlopen:', e)
PY
$T doctor --python /tmp/tv/bin/python > $OUT/doctor-tv022.txt 2>&1; echo "exit=$?" >> $OUT/doctor-tv022.txt
$T doctor --python /tmp/tv/bin/python -v > $OUT/doctor-tv022-v.txt 2>&1
$T doctor --python /tmp/tv/bin/python --json > $OUT/doctor-tv022.json 2>/dev/null
