#!/usr/bin/env python3
# Machine code of each kernel in a cubin, for comparing builds without
# cuobjdump: one line per .text.<kernel> section, its size in instructions
# (16 bytes each on sm_80 and sm_90) and a hash of its bytes.
#   nvcc -cubin -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Isrc \
#     src/cuda/entry.cu -o new.cubin &&
#   python3 bench/kernel/cubin-sections.py new.cubin
import sys, struct, hashlib, re
d = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3A)
secs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
stro = secs[shstrndx][4]
def name(o): return d[stro + o:d.index(b'\0', stro + o)].decode()
for s in secs:
    n = name(s[0])
    if n.startswith('.text.'):
        b = d[s[4]:s[4] + s[5]]
        short = re.sub(r'.*entry_cu_[0-9a-f]*', '', n)
        if 'cub' in n: short = 'cub:' + n.split('radix_sort')[-1][:30] if 'radix_sort' in n else 'cub:' + n[-20:]
        print(f"{short:60s} {len(b)//16:6d} {hashlib.sha1(b).hexdigest()[:12]}")
