# SPDX-License-Identifier: BSD-3-Clause
"""DUMP payloads of module types, read and written byte by byte (Redis 7.0's RDB encoding, written from its
documented format): the fixture script uses it to make RedisBloom payloads of older encoding versions, the
migration tests to make corrupt ones with a valid checksum. Standard library only."""
import struct

MODULE_TYPE_2 = 7  # RDB_TYPE_MODULE_2: the value carries typed opcodes
OP_EOF, OP_SINT, OP_UINT, OP_FLOAT, OP_DOUBLE, OP_STRING = 0, 1, 2, 3, 4, 5
NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _crc64_table():
    poly = 0x95AC9329AC4BC9B5  # Jones polynomial, reflected (Redis's crc64)
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc64_table()


def crc64(data, crc=0):
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def module_id(name, encver):
    assert len(name) == 9 and 0 <= encver < 1024
    v = 0
    for ch in name:
        v = (v << 6) | NAME_CHARS.index(ch)
    return (v << 10) | encver


def module_name(mid):
    v = mid >> 10
    return "".join(NAME_CHARS[(v >> (6 * (8 - i))) & 63] for i in range(9)), mid & 1023


def _read_len(buf, pos):
    b = buf[pos]
    kind = b >> 6
    if kind == 0:
        return b & 63, pos + 1, False
    if kind == 1:
        return ((b & 63) << 8) | buf[pos + 1], pos + 2, False
    if b == 0x80:
        return struct.unpack(">I", buf[pos + 1:pos + 5])[0], pos + 5, False
    if b == 0x81:
        return struct.unpack(">Q", buf[pos + 1:pos + 9])[0], pos + 9, False
    return b & 63, pos + 1, True  # an encoded string (integer or LZF)


def _write_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def _lzf_decompress(src, out_len):
    out = bytearray()
    i = 0
    while i < len(src):
        ctrl = src[i]
        i += 1
        if ctrl < 32:
            out += src[i:i + ctrl + 1]
            i += ctrl + 1
        else:
            length = ctrl >> 5
            if length == 7:
                length += src[i]
                i += 1
            ref = len(out) - ((ctrl & 0x1F) << 8) - src[i] - 1
            i += 1
            for _ in range(length + 2):
                out.append(out[ref])
                ref += 1
    assert len(out) == out_len
    return bytes(out)


def _read_string(buf, pos):
    n, pos, enc = _read_len(buf, pos)
    if not enc:
        return bytes(buf[pos:pos + n]), pos + n
    if n == 0:
        return str(struct.unpack("b", buf[pos:pos + 1])[0]).encode(), pos + 1
    if n == 1:
        return str(struct.unpack("<h", buf[pos:pos + 2])[0]).encode(), pos + 2
    if n == 2:
        return str(struct.unpack("<i", buf[pos:pos + 4])[0]).encode(), pos + 4
    assert n == 3, "unknown string encoding"
    clen, pos, _ = _read_len(buf, pos)
    ulen, pos, _ = _read_len(buf, pos)
    return _lzf_decompress(buf[pos:pos + clen], ulen), pos + clen


def parse(payload):
    """A module DUMP payload -> (type name, encver, [(opcode, value)...], rdb version). Checks the CRC."""
    body, footer = payload[:-10], payload[-10:]
    rdbver = struct.unpack("<H", footer[:2])[0]
    assert struct.unpack("<Q", footer[2:])[0] == crc64(payload[:-8]), "bad checksum"
    assert body[0] == MODULE_TYPE_2
    mid, pos, _ = _read_len(body, 1)
    ops = []
    while True:
        op, pos, _ = _read_len(body, pos)
        if op == OP_EOF:
            break
        if op in (OP_UINT, OP_SINT):
            v, pos, _ = _read_len(body, pos)
        elif op == OP_DOUBLE:
            v, pos = struct.unpack("<d", body[pos:pos + 8])[0], pos + 8
        elif op == OP_FLOAT:
            v, pos = struct.unpack("<f", body[pos:pos + 4])[0], pos + 4
        elif op == OP_STRING:
            v, pos = _read_string(body, pos)
        else:
            raise AssertionError("unknown opcode %d" % op)
        ops.append((op, v))
    assert pos == len(body), "trailing bytes"
    name, encver = module_name(mid)
    return name, encver, ops, rdbver


def build(name, encver, ops, rdbver=10):
    """The DUMP payload of a module value: typed opcodes, then EOF, RDB version and CRC64."""
    out = bytearray([MODULE_TYPE_2]) + _write_len(module_id(name, encver))
    for op, v in ops:
        out += _write_len(op)
        if op in (OP_UINT, OP_SINT):
            out += _write_len(v)
        elif op == OP_DOUBLE:
            out += struct.pack("<d", v)
        elif op == OP_FLOAT:
            out += struct.pack("<f", v)
        else:
            out += _write_len(len(v)) + bytes(v)
    out += _write_len(OP_EOF) + struct.pack("<H", rdbver)
    return bytes(out + struct.pack("<Q", crc64(out)))


def U(v):
    return (OP_UINT, v)


def D(v):
    return (OP_DOUBLE, v)


def S(v):
    return (OP_STRING, bytes(v))
