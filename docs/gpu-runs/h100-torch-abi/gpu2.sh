#!/bin/bash
set -x
T=$PWD/.gpu-carry/torchfix
rm -rf /tmp/tv; python3 -m venv /tmp/tv
SP=/opt/torch/.venv/lib/python3.12/site-packages
echo "$SP" > /tmp/tv/lib/python3.12/site-packages/opt-torch.pth
/tmp/tv/bin/pip install -q --no-index --no-deps .gpu-carry/torchvision-0.22.0-*.whl
/tmp/tv/bin/python -c "import torch, torchvision; print(torch.__version__, torchvision.__version__, torchvision.__file__); import torchvision.ops; print(torchvision.ops.nms(torch.rand(4,4,device='cuda'), torch.rand(4,device='cuda'), 0.5))" > $OUT/import-tv022.txt 2>&1; echo "exit=$?" >> $OUT/import-tv022.txt
$T doctor --python /tmp/tv/bin/python -v > $OUT/doctor-tv022.txt 2>&1; echo "exit=$?" >> $OUT/doctor-tv022.txt
$T doctor --python /tmp/tv/bin/python --json > $OUT/doctor-tv022.json 2>/dev/null
$T doctor -vv > $OUT/doctor-vv.txt 2>&1
for i in 1 2 3; do /usr/bin/time -f "%e s %M KB" $T doctor > /dev/null 2>> $OUT/doctor-times.txt; done
for i in 1 2 3; do /usr/bin/time -f "python-only %e s" $T doctor --python /usr/bin/python3 > /dev/null 2>> $OUT/doctor-times.txt; done
