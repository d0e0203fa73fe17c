"""Runs an unmodified PyTorch script against a tensord server:

    python -m tensord.run script.py [args...]
    python -m tensord.run -m package.module [args...]

The script's `import torch` (and `import torch.nn.functional as F`, `from torch import nn`,
`torch.nn.init`, `torch.nn.utils` (`.rnn`, `.parametrize`, `.prune`, …), `torch.nn.modules`,
`torch.nn.parameter`, `torch.cuda`, `torch.testing`, `torch.utils.data`, `torch.distributions`,
`torch.linalg`, `torch.special`, `torch.autograd`, `torch.jit`, `torch.distributed`,
`torch.amp`, `torch.cpu.amp`, `torch.cuda.amp`, `torch.profiler`, `torch.autograd.profiler`,
`torch.utils.benchmark`) get tensord's modules, so every tensor it
makes lives on the server at $TENSORD_ADDRESS (127.0.0.1:50051 unless set). Nothing is
patched inside tensord but names: the modules under which the script finds it, and its classes'
`__module__`, which become torch's (`type(x)` prints `<class 'torch.Tensor'>`, an `nn.Linear`
is `torch.nn.modules.linear.Linear`, and pickle finds each class under that name).
"""
import os
import runpy
import sys


def install_torch_aliases():
    """Makes `torch` and its submodules that tensord has resolve to tensord's."""
    import tensord
    import tensord.autograd
    import tensord.amp
    import tensord.cpu
    import tensord.cpu.amp
    import tensord.cuda
    import tensord.cuda.amp
    import tensord.distributions
    import tensord.nn
    import tensord.nn.functional
    import tensord.profiler
    import tensord.autograd.profiler
    import tensord.linalg
    import tensord.serialization
    import tensord.special
    import tensord.testing
    import tensord.utils
    import tensord.utils.benchmark  # not imported by `import tensord`, as torch's by `import torch`
    import tensord.utils.data
    import tensord.utils.data.dataloader
    import tensord.utils.data.dataset
    import tensord.utils.data.sampler
    aliases = {"torch": tensord, "torch.nn": tensord.nn,
               "torch.nn.functional": tensord.nn.functional, "torch.cuda": tensord.cuda,
               "torch.testing": tensord.testing, "torch.serialization": tensord.serialization,
               "torch.utils": tensord.utils, "torch.utils.data": tensord.utils.data,
               "torch.distributions": tensord.distributions, "torch.linalg": tensord.linalg,
               "torch.special": tensord.special, "torch.backends": tensord.backends,
               "torch.random": tensord.random, "torch.optim": tensord.optim,
               "torch.autograd": tensord.autograd, "torch.jit": tensord.jit,
               "torch.distributed": tensord.distributed, "torch.amp": tensord.amp,
               "torch.cpu": tensord.cpu, "torch.profiler": tensord.profiler,
               "torch.return_types": tensord.return_types}
    # torch.nn.init, torch.nn.utils.rnn, torch.utils.data.dataloader, …
    for name, module in list(sys.modules.items()):
        if name.startswith(("tensord.nn.", "tensord.utils.", "tensord.distributions.",
                            "tensord.optim.", "tensord.autograd.", "tensord.amp.",
                            "tensord.cpu.", "tensord.cuda.")) and \
                module is not None:
            aliases["torch" + name[len("tensord"):]] = module
    for name, module in aliases.items():
        sys.modules[name] = module
    _torch_class_names(aliases)


def _torch_class_names(aliases):
    """Each class of an aliased module takes that module's torch name as its __module__; the
    classes tensord exports from its private modules (Tensor, Size, dtype, …) take `torch`."""
    import tensord
    torch_names = {module.__name__: name for name, module in aliases.items()}
    for module_name, module in list(sys.modules.items()):
        new = torch_names.get(module_name)
        if new is None or module is None:
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, type) and obj.__module__ == module_name:
                obj.__module__ = new
    for obj in list(vars(tensord).values()):
        if isinstance(obj, type) and obj.__module__.startswith("tensord."):
            obj.__module__ = "torch"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m tensord.run script.py [args...] | -m module [args...]"
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() if argv else usage)
        return 0 if argv else 2
    install_torch_aliases()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(usage, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        script = os.path.abspath(argv[0])  # python sets a script's __file__ so, since 3.9
        sys.path.insert(0, os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
