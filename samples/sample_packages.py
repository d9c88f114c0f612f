"""The other .pt2 archives torch writes, made from one sample's program (channels_last_convnet:
weights and stored inputs) by a 2.x torch: package_pt2 naming the program otherwise than
torch.export.save's "model", two programs in one archive, and AOTInductor's compiled code,
alone (what aoti_compile_and_package writes) and beside the program it was compiled from. Not
in the manifest: the runner's tests load them (layoutprof runs the program and refuses the
others in one line). One AOTInductor compile on the CPU (C++, about 15 s)."""

import os
from typing import List

import torch

PACKAGES_DIR = "packages"


def write_packages(out_dir: str, source: str) -> List[str]:
    """OUT/packages/{renamed,two_programs,aoti_only,aoti_and_program}.pt2 from the program
    saved at `source` (renamed: the program under the source's own name), whose stored example
    inputs the compile takes."""
    from torch.export.pt2_archive._package import package_pt2

    folder = os.path.join(out_dir, PACKAGES_DIR)
    os.makedirs(folder, exist_ok=True)
    program = torch.export.load(source)
    paths = {name: os.path.join(folder, name + ".pt2")
             for name in ("renamed", "two_programs", "aoti_only", "aoti_and_program")}
    name = os.path.splitext(os.path.basename(source))[0]
    package_pt2(paths["renamed"], exported_programs={name: program})
    package_pt2(paths["two_programs"], exported_programs={"first": program, "second": program})
    # aoti_compile_and_package is aot_compile, then package_pt2 of its files alone.
    args, kwargs = program.example_inputs
    files = torch._inductor.aot_compile(program.module(), args, kwargs, options={"aot_inductor.package": True})
    package_pt2(paths["aoti_only"], aoti_files=files)
    package_pt2(paths["aoti_and_program"], exported_programs=program, aoti_files=files)
    return list(paths.values())
