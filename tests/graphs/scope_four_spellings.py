# All four spellings are lowered: torch.autocast and torch.amp.autocast share
# one class, torch.cpu.amp.autocast and torch.cuda.amp.autocast have their own.
# RUN: jitamp dump %s:spelled_autocast | filecheck %s --check-prefix AUTOCAST
# RUN: jitamp dump %s:spelled_amp | filecheck %s --check-prefix AMP
# RUN: jitamp dump %s:spelled_cpu_amp | filecheck %s --check-prefix CPUAMP
# RUN: jitamp dump %s:spelled_cuda_amp | filecheck %s --check-prefix CUDAAMP
import torch


def spelled_autocast(x, y):
    with torch.autocast("cpu"):
        z = torch.mm(x, y)
    return z


def spelled_amp(x, y):
    with torch.amp.autocast("cpu"):
        z = torch.mm(x, y)
    return z


def spelled_cpu_amp(x, y):
    with torch.cpu.amp.autocast():
        z = torch.mm(x, y)
    return z


def spelled_cuda_amp(x, y):
    with torch.cuda.amp.autocast():
        z = torch.mm(x, y)
    return z

# AUTOCAST-LABEL: graph(%x.1 : Tensor,
# AUTOCAST: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# AUTOCAST: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# AUTOCAST: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# AUTOCAST-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# AUTOCAST-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# AUTOCAST-NEXT: aten::mm([[X]], [[Y]])
# AUTOCAST-NEXT: jitamp::autocast_exit([[G]])
# AUTOCAST-NOT: prim::Exit

# AMP-LABEL: graph(%x.1 : Tensor,
# AMP: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# AMP: [[AC:%[^ ]+]] : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
# AMP: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# AMP-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# AMP-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# AMP-NEXT: aten::mm([[X]], [[Y]])
# AMP-NEXT: jitamp::autocast_exit([[G]])
# AMP-NOT: prim::Exit

# CPUAMP-LABEL: graph(%x.1 : Tensor,
# CPUAMP: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CPUAMP: [[AC:%[^ ]+]] : __torch__.torch.cpu.amp.autocast_mode.autocast = prim::CreateObject()
# CPUAMP: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CPUAMP-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CPUAMP-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CPUAMP-NEXT: aten::mm([[X]], [[Y]])
# CPUAMP-NEXT: jitamp::autocast_exit([[G]])
# CPUAMP-NOT: prim::Exit

# CUDAAMP-LABEL: graph(%x.1 : Tensor,
# CUDAAMP: [[DEV:%[^ ]+]] : str = prim::Constant[value="cpu,cuda"]()
# CUDAAMP: [[AC:%[^ ]+]] : __torch__.torch.cuda.amp.autocast_mode.autocast = prim::CreateObject()
# CUDAAMP: [[G:%[^ ]+]] : __torch__.torch.classes.jitamp.AutocastGuard, [[R:%[^ ]+]] : int = jitamp::autocast_enter([[AC]])
# CUDAAMP-NEXT: [[Y:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%y.1, [[DEV]], [[R]])
# CUDAAMP-NEXT: [[X:%[^ ]+]] : Tensor = jitamp::autocast_to_fp16(%x.1, [[DEV]], [[R]])
# CUDAAMP-NEXT: aten::mm([[X]], [[Y]])
# CUDAAMP-NEXT: jitamp::autocast_exit([[G]])
# CUDAAMP-NOT: prim::Exit
