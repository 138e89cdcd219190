# A hand-written ResNet-50 training loop, independent of torchfix's child
# (templates/tune_model.py), to check `torchfix tune --model resnet50`'s
# numbers: the same batch, 5 warm-up and 20 timed steps, each cumulative
# setting turned on the plain way a user would. Prints one JSON line.
import json
import sys
import time

import torch
import torchvision

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 128
dev = torch.device("cuda")
model = torchvision.models.resnet50(weights=None).to(dev).train()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(batch, 3, 224, 224, device=dev)
y = torch.randint(0, 1000, (batch,), device=dev)


def images_per_s(bf16=False, cl=False):
    global model, x
    model = model.to(memory_format=torch.channels_last if cl else torch.contiguous_format)
    inp = x.to(memory_format=torch.channels_last) if cl else x.contiguous()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(model(inp), y)
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    return batch * 20 / (time.perf_counter() - t)


out = {"torch": torch.__version__, "batch": batch,
       "defaults_cudnn_allow_tf32": torch.backends.cudnn.allow_tf32}
out["defaults"] = images_per_s()
torch.backends.cudnn.benchmark = True
out["cudnn_benchmark"] = images_per_s()
torch.backends.cuda.matmul.fp32_precision = "tf32"
torch.backends.cudnn.conv.fp32_precision = "tf32"
out["tf32"] = images_per_s()
out["channels_last"] = images_per_s(cl=True)
out["bf16"] = images_per_s(bf16=True, cl=True)
print(json.dumps(out))
