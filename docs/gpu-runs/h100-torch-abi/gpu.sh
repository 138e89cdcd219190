#!/bin/bash
# Real check of package.torch-abi on the H200: torch 2.11 with its own
# torchvision 0.26 (must pass), then torchvision 0.22.0 (built against torch 2.7)
# in a venv over the same torch (must be found, and its import must really fail).
set -x
T=$PWD/.gpu-carry/torchfix
$T --version
time $T doctor > $OUT/doctor-real.txt 2>&1; echo "exit=$?" >> $OUT/doctor-real.txt
$T doctor --json > $OUT/doctor-real.json 2>/dev/null
python3 -m venv --system-site-packages /tmp/tv
/tmp/tv/bin/pip install -q --no-index --no-deps .gpu-carry/torchvision-0.22.0-*.whl
/tmp/tv/bin/python -c "import torch, torchvision; print(torch.__version__, torchvision.__version__); import torchvision.ops; print(torchvision.ops.nms(torch.rand(4,4,device='cuda'), torch.rand(4,device='cuda'), 0.5))" > $OUT/import-tv022.txt 2>&1; echo "exit=$?" >> $OUT/import-tv022.txt
(time $T doctor --python /tmp/tv/bin/python -v) > $OUT/doctor-tv022.txt 2>&1; echo "exit=$?" >> $OUT/doctor-tv022.txt
$T doctor --python /tmp/tv/bin/python --json > $OUT/doctor-tv022.json 2>/dev/null
bash .gpu-carry/torch-symbols.sh $T /opt/torch/.venv/lib/python3.12/site-packages/torch/lib 5 > $OUT/bench.txt 2>&1
for i in 1 2 3 4 5; do /usr/bin/time -f "%e s %M KB" $T doctor > /dev/null 2>> $OUT/doctor-times.txt; done
ls /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/ | head -30 > $OUT/torch-lib.txt
