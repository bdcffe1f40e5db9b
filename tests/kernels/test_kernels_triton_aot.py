"""Ahead-of-time compile of the shipped Triton configurations for sm_90 (H100/H200), no GPU needed.

Triton lowers each kernel to PTX and runs its bundled ``ptxas`` for ``GPUTarget("cuda", 90, 32)``
(arch 90, warp size 32); ``cuobjdump`` from the same bundle reports registers and stack. A non-zero
stack means register spills, which would put the on-chip weight tiles into local memory.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import warnings

import pytest

triton = pytest.importorskip("triton", reason="Triton is the 'gpu' extra (pip install 'neurodyn[gpu]')")

SM90_SMEM_LIMIT = 232448  # bytes of shared memory one block may use on sm_90


def _tools():
    try:
        from triton.backends.nvidia.compiler import get_ptxas
    except ImportError as err:  # pragma: no cover - depends on the triton build
        pytest.skip(f"this triton build has no NVIDIA backend ({err})")
    cuobjdump = os.path.join(os.path.dirname(get_ptxas(90).path), "cuobjdump")
    if not os.path.exists(cuobjdump):
        pytest.skip(f"triton ships no cuobjdump at {cuobjdump}; cannot read register/stack usage")
    return cuobjdump


def compile_sm90(name: str, constexprs: dict, num_warps: int) -> tuple[int, int, int]:
    """Compile kernel ``name`` for sm_90 and return (registers, stack bytes, shared bytes)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from neurodyn.kernels import _triton_kernels as triton_kernels

    fn = getattr(triton_kernels, name)
    sig = {}
    for arg in fn.arg_names:
        if arg.isupper() or arg.startswith("BLOCK"):
            sig[arg] = "constexpr"
        elif arg.endswith("_ptr"):
            sig[arg] = "*fp32"
        else:
            sig[arg] = "fp32" if arg in ("alpha", "noise_std", "strength") else "i32"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=constexprs),
                                target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as f:
            f.write(kernel.asm["cubin"])
        usage = subprocess.run([_tools(), "--dump-resource-usage", path], capture_output=True, text=True,
                               check=True).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+)", usage)
    return int(m.group(1)), int(m.group(2)), int(kernel.metadata.shared)


def _shipped():
    """Every kernel at its largest resident tile, with each of its autotune candidates."""
    from neurodyn.kernels._triton_backend import (
        FORCING_MAX_OUTPUTS,
        TILED_BLOCK_N,
        configs_for,
        shallow_train_config,
    )

    flags = {"HAS_NOISE": True, "RECORD": True}
    cases = {
        "leaky_kernel": ({"ACT": 0, "BLOCK_N": 64, **flags}, 64),
        "gru_kernel": ({"BLOCK_N": 32, **flags}, 32),
        "pl_kernel": ({"BLOCK_N": 64, **flags}, 64),
        "shallow_kernel": ({"CLIPPED": True, "BLOCK_N": 64, "BLOCK_L": 64, **flags}, 64),
        "leaky_tiled_kernel": ({"ACT": 0, "BLOCK_N": TILED_BLOCK_N, **flags}, TILED_BLOCK_N),
    }
    for name, (const, bn) in cases.items():
        for block_b, warps in configs_for(name, bn):
            yield name, {**const, "BLOCK_B": block_b}, warps
    # the training kernels run the first configuration of leaky_kernel at every BLOCK_N
    for bn in (16, 32, 64):
        block_b, warps = configs_for("leaky_kernel", bn)[0]
        tile = {"BLOCK_N": bn, "BLOCK_B": block_b}
        # unforced, and error and teacher forcing through readouts of up to FORCING_MAX_OUTPUTS outputs
        for force, block_o in ((0, 16), *((f, o) for f in (1, 2) for o in (16, FORCING_MAX_OUTPUTS))):
            forced = {"FORCE": force, "BLOCK_O": block_o, **tile}
            yield "leaky_train_forward_kernel", {"ACT": 0, "HAS_NOISE": True, **forced}, warps
            yield "leaky_train_backward_kernel", forced, warps
        yield "pl_train_forward_kernel", {"HAS_NOISE": True, **tile}, warps
        yield "pl_train_backward_kernel", tile, warps
        yield "gru_train_forward_kernel", {"HAS_NOISE": True, **tile}, warps
        yield "gru_train_backward_kernel", tile, warps
    # the shallow PLRNN's, at every latent and hidden BLOCK size
    for bn in (16, 32, 64):
        for bl in (16, 32, 64):
            block_b, warps = shallow_train_config(bn, bl)
            tile = {"BLOCK_N": bn, "BLOCK_L": bl, "BLOCK_B": block_b, "CLIPPED": True}
            yield "shallow_train_forward_kernel", {"HAS_NOISE": True, **tile}, warps
            yield "shallow_train_backward_kernel", tile, warps


def test_leaky_kernel_compiles_for_sm90_without_spills():
    _tools()
    regs, stack, smem = compile_sm90("leaky_kernel", {"ACT": 0, "HAS_NOISE": True, "RECORD": True,
                                                      "BLOCK_N": 64, "BLOCK_B": 16}, 8)
    assert stack == 0, f"{regs} registers and {stack} bytes of stack (spills)"
    assert 0 < regs <= 255 and smem <= SM90_SMEM_LIMIT


def test_leaky_bptt_kernel_compiles_for_sm90_without_spills():
    # W_rec and its gradient's partial sum both stay in registers at 64 units (teacher forcing: its mask too)
    _tools()
    for force in (0, 2):
        regs, stack, smem = compile_sm90("leaky_train_backward_kernel", {"FORCE": force, "BLOCK_O": 16,
                                                                          "BLOCK_N": 64, "BLOCK_B": 16}, 8)
        assert stack == 0, f"FORCE={force}: {regs} registers and {stack} bytes of stack (spills)"
        assert 0 < regs <= 255 and smem <= SM90_SMEM_LIMIT


@pytest.mark.parametrize("force", [0, 1, 2])
def test_leaky_train_forward_compiles_for_sm90_without_spills(force):
    # W_rec, and under error or teacher forcing the readout and its pseudo-inverse, stay in registers
    _tools()
    const = {"ACT": 0, "HAS_NOISE": True, "FORCE": force, "BLOCK_O": 16, "BLOCK_N": 64, "BLOCK_B": 16}
    regs, stack, smem = compile_sm90("leaky_train_forward_kernel", const, 8)
    assert stack == 0, f"FORCE={force}: {regs} registers and {stack} bytes of stack (spills)"
    assert 0 < regs <= 255 and smem <= SM90_SMEM_LIMIT


@pytest.mark.parametrize("name", ["pl_train_forward_kernel", "pl_train_backward_kernel"])
def test_pl_training_kernels_compile_for_sm90_without_spills(name):
    # A and W both stay in registers at 64 latents
    _tools()
    const = {"HAS_NOISE": True} if "forward" in name else {}
    regs, stack, smem = compile_sm90(name, {**const, "BLOCK_N": 64, "BLOCK_B": 16}, 8)
    assert stack == 0, f"{regs} registers and {stack} bytes of stack (spills)"
    assert 0 < regs <= 255 and smem <= SM90_SMEM_LIMIT


@pytest.mark.parametrize("name", ["gru_train_forward_kernel", "gru_train_backward_kernel"])
def test_gru_training_kernels_compile_for_sm90_without_spills(name):
    # the three W_hh blocks stay in registers at 64 units
    _tools()
    const = {"HAS_NOISE": True} if "forward" in name else {}
    regs, stack, smem = compile_sm90(name, {**const, "BLOCK_N": 64, "BLOCK_B": 16}, 8)
    assert stack == 0, f"{regs} registers and {stack} bytes of stack (spills)"
    assert 0 < regs <= 255 and smem <= SM90_SMEM_LIMIT


@pytest.mark.parametrize("name", ["shallow_train_forward_kernel", "shallow_train_backward_kernel"])
def test_shallow_training_kernels_compile_for_sm90_without_spills(name):
    # W1 and W2 both stay in registers at 64 latent and 64 hidden units
    _tools()
    const = {"HAS_NOISE": True} if "forward" in name else {}
    regs, stack, smem = compile_sm90(name, {**const, "CLIPPED": True, "BLOCK_N": 64, "BLOCK_L": 64,
                                            "BLOCK_B": 16}, 8)
    assert stack == 0, f"{regs} registers and {stack} bytes of stack (spills)"
    assert 0 < regs <= 255 and smem <= SM90_SMEM_LIMIT


@pytest.mark.slow
@pytest.mark.parametrize("name,const,warps", list(_shipped()), ids=lambda v: str(v))
def test_every_shipped_config_compiles_for_sm90_without_spills(name, const, warps):
    _tools()
    regs, stack, smem = compile_sm90(name, const, warps)
    assert stack == 0, f"{name} {const} warps={warps}: {regs} registers, {stack} bytes stack (spills)"
    assert smem <= SM90_SMEM_LIMIT
