# fp32 on CPU only: each torch.fft op (here rfft, then ifft2 on its complex
# result) gets its own float32 cast with devices "cpu".
# RUN: jitamp dump %s:spectrum | filecheck %s
import torch


def spectrum(x):
    with torch.autocast("cpu"):
        a = torch.fft.rfft(x)
        b = torch.fft.ifft2(a)
    return b

# CHECK-LABEL: graph(%x.1 : Tensor):
# CHECK-NOT: cuda"
# CHECK: [[CPU:%[^ ]+]] : str = prim::Constant[value="cpu"]()
# CHECK-NOT: cuda"
# CHECK: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter(
# CHECK-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%x.1, [[CPU]], [[R]])
# CHECK-NEXT: %a.1 : Tensor = aten::fft_rfft([[X]],
# CHECK-NEXT: [[A:%[^ ]+]] : Tensor = jitamp::autocast_to_fp32(%a.1, [[CPU]], [[R]])
# CHECK-NEXT: %b.1 : Tensor = aten::fft_ifft2([[A]],
# CHECK-NEXT: jitamp::autocast_exit([[G]])
