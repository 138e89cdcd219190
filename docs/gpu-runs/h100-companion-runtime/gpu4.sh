#!/bin/bash
# Session 19: torchvision 0.22.0 (a CUDA 12 wheel built for torch 2.7) over the
# image's torch 2.11.0+cu130, with the static binary of main at fee09b4 (built by the fresh-clone CI run); then the state
# its printed fix leaves (torchvision built for torch 2.11.0 from the cu130
# index: the image's own, as pip cannot reach the index here), and a real kernel.
T=$PWD/.gpu-carry/torchfix
$T --version > $OUT/version.txt 2>&1
SP=/opt/torch/.venv/lib/python3.12/site-packages
ls -d $SP/torchvision* > $OUT/image-torchvision.txt 2>&1
rm -rf /tmp/tv; python3 -m venv /tmp/tv
for e in $SP/*; do case $(basename $e) in torchvision*|pip|pip-*) ;; *) ln -s $e /tmp/tv/lib/python3.12/site-packages/ ;; esac; done
/tmp/tv/bin/pip install -q --no-index --no-deps .gpu-carry/torchvision-0.22.0-*.whl
/tmp/tv/bin/python -c "import torch, torchvision; import torchvision.ops; print(torchvision.ops.nms(torch.rand(4,4,device='cuda'), torch.rand(4,device='cuda'), 0.5))" > $OUT/before-import.txt 2>&1; echo "exit=$?" >> $OUT/before-import.txt
$T doctor --python /tmp/tv/bin/python > $OUT/before-doctor.txt 2>&1; echo "exit=$?" >> $OUT/before-doctor.txt
$T doctor --python /tmp/tv/bin/python --json > $OUT/before-doctor.json 2>/dev/null
# the state the fix leaves: torchvision built for torch 2.11.0 from cu130 (the image's)
/tmp/tv/bin/pip uninstall -q -y torchvision > $OUT/after-uninstall.txt 2>&1
for e in $SP/torchvision*; do ln -s $e /tmp/tv/lib/python3.12/site-packages/; done
/tmp/tv/bin/python -c "import torch, torchvision; import torchvision.ops; print(torchvision.__version__, torchvision.ops.nms(torch.rand(4,4,device='cuda'), torch.rand(4,device='cuda'), 0.5))" > $OUT/after-import.txt 2>&1; echo "exit=$?" >> $OUT/after-import.txt
$T doctor --python /tmp/tv/bin/python > $OUT/after-doctor.txt 2>&1; echo "exit=$?" >> $OUT/after-doctor.txt
$T doctor --python /tmp/tv/bin/python --run > $OUT/after-doctor-run.txt 2>&1; echo "exit=$?" >> $OUT/after-doctor-run.txt
# torch's own fatbins: compressed for size (flag 0x8000) in the cu130 wheel?
$T doctor --json > $OUT/image-doctor.json 2>/dev/null
python3 - > $OUT/torch-zstd.txt 2>&1 <<'PY'
import json
d = json.load(open(__import__('os').environ['OUT'] + '/image-doctor.json'))
for py in d['snapshot']['pythons']:
    for k in py.get('kernels', []):
        if k['distribution'] in ('torch', 'torchvision'):
            for b in k['binaries']:
                print(k['distribution'], k['version'], b['path'].split('/')[-1], 'zstd_fatbins=', b.get('zstd_fatbins', False), 'cudart', b.get('cudart_major'))
PY
