# Imports the built extension and runs one kernel on every visible GPU;
# exits 1 on a wrong result or an exception (prints which GPU).
import sys

import torch
import tfext

ok = True
for d in range(torch.cuda.device_count()):
    x = torch.arange(1024, device=f"cuda:{d}", dtype=torch.float32)
    y = tfext.op0(x, 2.0)
    torch.cuda.synchronize(d)
    good = torch.allclose(y, x * 2.0)
    cap = torch.cuda.get_device_capability(d)
    print(f"GPU {d} {torch.cuda.get_device_name(d)} sm_{cap[0]}{cap[1]}: op0 {'ok' if good else 'WRONG'}")
    ok = ok and good
if torch.cuda.device_count() == 0:
    print("no CUDA device visible")
    ok = False
sys.exit(0 if ok else 1)
