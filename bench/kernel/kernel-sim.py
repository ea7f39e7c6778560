# Simulated shared-memory wavefronts of the CUDA fast kernel's threshold
# load and counter atomic (bench/kernel/kernel-notes.md): the catalogs in the
# device's Hilbert order, warps of 32 consecutive points against one j,
# wavefronts = the most distinct words any bank holds.
#   python3 bench/kernel/kernel-sim.py DATA_DIR MB,OCT ...   (needs numpy)
# Designs: cur (below/above arrays half a bank row apart, as the kernel
# has them), merged (counter c + side), slot (per-slot counters).
import numpy as np, sys
rng = np.random.default_rng(1)

def load(p):
    a = np.loadtxt(p)
    ra = np.radians(a[:, 0] / 60); dec = np.radians(a[:, 1] / 60)
    return np.stack([np.cos(dec) * np.cos(ra), np.cos(dec) * np.sin(ra), np.sin(dec)], 1)

def hilbert10(x, y):
    n = 1024; d = np.zeros_like(x)
    s = n // 2
    x = x.copy(); y = y.copy()
    while s > 0:
        rx = ((x & s) > 0).astype(np.int64); ry = ((y & s) > 0).astype(np.int64)
        d += s * s * ((3 * rx) ^ ry)
        m = ry == 0
        flip = m & (rx == 1)
        x = np.where(flip, n - 1 - x, x); y = np.where(flip, n - 1 - y, y)
        t = x.copy()
        x = np.where(m, y, x); y = np.where(m, t, y)
        s //= 2
    return d

def cell_key(P):
    x, y, z = P[:, 0], P[:, 1], P[:, 2]
    ax, ay, az = abs(x), abs(y), abs(z)
    fx = (ax >= ay) & (ax >= az); fy = ~fx & (ay >= az); fz = ~fx & ~fy
    face = np.where(fx, np.where(x >= 0, 0, 1), np.where(fy, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    m = np.where(fx, ax, np.where(fy, ay, az))
    u = np.where(fx, y, np.where(fy, x, x)); v = np.where(fx, z, np.where(fy, z, y))
    iu = np.clip(((u / m + 1) * 512).astype(np.int64), 0, 1023)
    iv = np.clip(((v / m + 1) * 512).astype(np.int64), 0, 1023)
    return (face << 20) | hilbert10(iu, iv)

def f32bits(a):
    return a.astype(np.float32).view(np.uint32).astype(np.int64)

def build(upper, mb, oct_, M):
    nt = oct_ << mb; sh = 23 - mb
    kbase = (129 - oct_) << mb
    floor_q = 2.0 ** (2 - oct_); c = floor_q + 2.0 ** (2 - oct_ - 4)
    thr = (upper / 2 + c).astype(np.float32).astype(np.float64)
    keys = kbase + np.arange(nt)
    A = (keys << sh).astype(np.uint32).view(np.float32).astype(np.float64)
    B = ((keys + 1) << sh).astype(np.uint32).view(np.float32).astype(np.float64)
    lo = np.searchsorted(thr, A - 2 * M, side='right')
    hi = np.searchsorted(thr, B + 2 * M, side='right')
    nrel = hi - lo
    t = np.where(nrel == 0, np.inf, np.where(nrel == 1, thr[np.minimum(lo, len(thr) - 1)], np.nan))
    return dict(mb=mb, oct=oct_, nt=nt, sh=sh, kbase=kbase, c=c, onec=np.float32(1 + c), t=t.astype(np.float32), lo=lo, nrel=nrel)

def wavefronts(addr):
    # addr: (W, 32) word addresses; wavefronts = max over banks of distinct addresses
    W = addr.shape[0]
    out = np.empty(W)
    for w in range(W):
        a = np.unique(addr[w])
        out[w] = np.bincount(a % 32, minlength=32).max()
    return out

def sim(I, J, tab, M, nwarps=1500, nj=40, design='cur'):
    n = len(I)
    If = I.astype(np.float32); Jf = J.astype(np.float32)
    starts = rng.integers(0, n // 32, nwarps) * 32
    lds = []; atm = []; ex = 0; tot = 0
    for s in starts:
        ii = If[s:s + 32]
        jj = Jf[rng.integers(0, len(J), nj)]
        # q = fma(nz, pz, fma(ny, py, fma(nx, px, onec))) approx in float64 then rounded
        q = (np.float64(tab['onec']) - ii[:, None, 0].astype(np.float64) * jj[None, :, 0]
             - ii[:, None, 1].astype(np.float64) * jj[None, :, 1] - ii[:, None, 2].astype(np.float64) * jj[None, :, 2]).astype(np.float32)
        Q = q.view(np.uint32).astype(np.int64)
        ci = (Q >> tab['sh']) - tab['kbase']
        ci = np.clip(ci, 0, tab['nt'] - 1)
        t = tab['t'][ci]
        d = q - t
        above = (d >= 0) | np.isnan(d)
        ex += np.sum(~(np.abs(d) >= M)); tot += d.size
        nt = tab['nt']
        if design == 'cur':
            ca = np.where(above, 2 * nt + 16 + ci, nt + ci)
        elif design == 'merged':
            ca = nt + ci + above
        elif design == 'slot':
            ca = tab['lo'][ci] + above
        # arrays are (32 lanes, nj) -> per j instruction
        lds.append(wavefronts(ci.T)); atm.append(wavefronts(ca.T))
    return np.mean(np.concatenate(lds)), np.mean(np.concatenate(atm)), ex / tot

D = load(sys.argv[1] + '/data_100k_arcmin.txt'); R = load(sys.argv[1] + '/flat_100k_arcmin.txt')
D = D[np.argsort(cell_key(D), kind='stable')]
R = R[np.argsort(cell_key(R), kind='stable')]
M = 3.7e-7
for name, edges in [('lin360', np.arange(361) * 0.25), ('log20', np.geomspace(0.01, 10, 21))]:
    upper = 4 * np.sin(np.radians(edges) / 2) ** 2
    for mb, oct_ in ([(int(a), int(b)) for a, b in (x.split(',') for x in sys.argv[2:])]):
        tab = build(upper, mb, oct_, M)
        for design in ['cur', 'merged', 'slot']:
            for lab, I, J in [('RR', R, R), ('DD', D, D), ('DR', D, R)]:
                l, a, e = sim(I, J, tab, M, design=design, nwarps=300)
                print(f"{name} mb={mb} oct={oct_} {design:6s} {lab}: lds {l:.2f} atom {a:.2f} exact {e:.2e}", flush=True)
