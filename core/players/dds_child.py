"""The double-dummy solver's child process (:mod:`.solver_process`).

Run as a script on the standard library alone, ``python -I -S dds_child.py LIBDDS``,
so that a child killed in the middle of a solve is replaced for about 25 ms of CPU
(importing ``core`` or endplay's binding would cost more than most solves it saves).

It reads requests from stdin: ``<ii`` (target, solutions) and a DDS ``deal`` as
raw bytes. For each it answers on stdout: ``<id`` (SolveBoard's return code, the
process's CPU seconds so far) and the ``futureTricks`` as raw bytes. It exits when
stdin closes.
"""

import ctypes
import os
import struct
import sys
import time

REQUEST = struct.Struct("<ii")
ANSWER = struct.Struct("<id")


class Deal(ctypes.Structure):
    _fields_ = [
        ("trump", ctypes.c_int),
        ("first", ctypes.c_int),
        ("currentTrickSuit", ctypes.c_int * 3),
        ("currentTrickRank", ctypes.c_int * 3),
        ("remainCards", (ctypes.c_uint * 4) * 4),
    ]


class FutureTricks(ctypes.Structure):
    _fields_ = [
        ("nodes", ctypes.c_int),
        ("cards", ctypes.c_int),
        ("suit", ctypes.c_int * 13),
        ("rank", ctypes.c_int * 13),
        ("equals", ctypes.c_int * 13),
        ("score", ctypes.c_int * 13),
    ]


def _read(n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def main() -> None:
    lib = ctypes.CDLL(sys.argv[1])
    lib.SetMaxThreads(0)  # as endplay's binding does in the parent
    size = REQUEST.size + ctypes.sizeof(Deal)
    fut = FutureTricks()
    while True:
        try:
            request = _read(size)
        except EOFError:
            return
        target, solutions = REQUEST.unpack_from(request)
        deal = Deal.from_buffer_copy(request, REQUEST.size)
        code = lib.SolveBoard(deal, target, solutions, 1, ctypes.byref(fut), 0)
        try:
            os.write(1, ANSWER.pack(code, time.process_time()) + bytes(fut))
        except BrokenPipeError:  # the parent is gone
            return


if __name__ == "__main__":
    main()
