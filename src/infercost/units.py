"""Unit factors: the only place that knows them. Base units inside: bytes, seconds, FLOP, USD."""

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 2**10
MiB = 2**20
GiB = 2**30

TFLOP = 1e12
GFLOP = 1e9

MS = 1e-3
US = 1e-6
HOUR_S = 3600.0

MILLION = 1e6
BILLION = 1e9
