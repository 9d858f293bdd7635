#!/usr/bin/env python3
"""Convert the DeepFilterNet3 ONNX model (DeepFilterNet3_onnx.tar.gz) into the flat
weight file that gpufir's own DeepFilterNet3 inference loads (src/dfn/dfn_model.c).

    scripts/dfn-convert.py DeepFilterNet3_onnx.tar.gz DeepFilterNet3.dfn

Needs the `onnx` and `numpy` Python packages (a venv is enough). Every tensor is
taken from a named node of the graph, and that node's operator and attributes are
checked against the architecture the engine implements, so a different model is
refused here with the node that differs, not misread later.

File layout (little-endian):
    char     magic[8]   "GFDFN3\\0\\0"
    uint32   version    1
    uint32   count      number of tensors
    count x { uint32 name_len; char name[name_len]; uint32 ndim; uint32 dims[ndim];
              float32 data[prod(dims)] }          (row-major, ONNX's layout)
    uint32   crc32      zlib's CRC-32 of every byte before it
The first tensor, "config", holds the [df] settings the architecture depends on.
"""
import configparser
import io
import struct
import sys
import tarfile
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

MAGIC = b"GFDFN3\0\0"
VERSION = 1
# [df] settings, in the order of the "config" tensor (dfn_model.h, enum dfn_cfg).
CONFIG_KEYS = [("sr", 48000), ("fft_size", 960), ("hop_size", 480), ("nb_erb", 32), ("nb_df", 96),
               ("df_order", 5), ("df_lookahead", 2), ("min_nb_erb_freqs", 2), ("norm_tau", 1),
               ("lsnr_max", 35), ("lsnr_min", -15)]
GRU = [("w", 1, (1, 768, 256)), ("r", 2, (1, 768, 256)), ("b", 3, (1, 1536))]
C64DW = (64, 1, 1, 3)
C64PW = (64, 64, 1, 1)


def sep(prefix, dw_node, pw_node, dw_shape=C64DW, pw_shape=C64PW):
    """A depthwise (or grouped) conv without bias, then a 1x1 conv with the folded batch norm."""
    return [(prefix + ".dw", dw_node, 1, dw_shape), (prefix + ".pw", pw_node, 1, pw_shape),
            (prefix + ".b", pw_node, 2, (pw_shape[0],))]


def gru(prefix, node):
    return [(prefix + "." + n, node, i, s) for n, i, s in GRU]


# (flat name, ONNX node name, input index, shape) per graph, in file order.
TENSORS = {
    "enc": [("enc.erb_conv0.w", "/erb_conv0/1/Conv", 1, (64, 1, 3, 3)),
            ("enc.erb_conv0.b", "/erb_conv0/1/Conv", 2, (64,))]
    + sep("enc.erb_conv1", "/erb_conv1/0/Conv", "/erb_conv1/1/Conv")
    + sep("enc.erb_conv2", "/erb_conv2/Conv", "/erb_conv2/Conv_1")
    + sep("enc.erb_conv3", "/erb_conv3/0/Conv", "/erb_conv3/1/Conv")
    + sep("enc.df_conv0", "/df_conv0/1/Conv", "/df_conv0/2/Conv", (64, 1, 3, 3))
    + sep("enc.df_conv1", "/df_conv1/Conv", "/df_conv1/Conv_1")
    + [("enc.df_fc_emb.w", "/df_fc_emb/0/Einsum", 1, (32, 96, 16)),
       ("enc.emb_in.w", "/emb_gru/linear_in/0/Einsum", 1, (16, 32, 16))]
    + gru("enc.emb_gru0", "/emb_gru/GRU")
    + [("enc.emb_out.w", "/emb_gru/linear_out/0/Einsum", 1, (16, 16, 32)),
       ("enc.lsnr.w", "/lsnr_fc/0/MatMul", 1, (512, 1)),
       ("enc.lsnr.b", "/lsnr_fc/0/Add", 0, (1,))],
    "erb_dec": [("erb.emb_in.w", "/emb_gru/linear_in/Einsum", 1, (16, 32, 16))]
    + gru("erb.emb_gru0", "/emb_gru/GRU") + gru("erb.emb_gru1", "/emb_gru/GRU_1")
    + [("erb.emb_out.w", "/emb_gru/linear_out/Einsum", 1, (16, 16, 32)),
       ("erb.conv3p.w", "/conv3p/0/Conv", 1, (64, 1, 1, 1)), ("erb.conv3p.b", "/conv3p/0/Conv", 2, (64,))]
    + sep("erb.convt3", "/convt3/Conv", "/convt3/Conv_1")
    + [("erb.conv2p.w", "/conv2p/Conv", 1, (64, 1, 1, 1)), ("erb.conv2p.b", "/conv2p/Conv", 2, (64,))]
    + sep("erb.convt2", "/convt2/0/ConvTranspose", "/convt2/1/Conv")
    + [("erb.conv1p.w", "/conv1p/Conv", 1, (64, 1, 1, 1)), ("erb.conv1p.b", "/conv1p/Conv", 2, (64,))]
    + sep("erb.convt1", "/convt1/ConvTranspose", "/convt1/Conv")
    + [("erb.conv0p.w", "/conv0p/Conv", 1, (64, 1, 1, 1)), ("erb.conv0p.b", "/conv0p/Conv", 2, (64,)),
       ("erb.conv0_out.w", "/conv0_out/0/Conv", 1, (1, 64, 1, 3)),
       ("erb.conv0_out.b", "/conv0_out/0/Conv", 2, (1,))],
    "df_dec": [("df.emb_in.w", "/df_gru/linear_in/linear_in.0/Einsum", 1, (8, 64, 32))]
    + gru("df.gru0", "/df_gru/gru/GRU") + gru("df.gru1", "/df_gru/gru/GRU_1")
    + [("df.skip.w", "/df_skip/Einsum", 1, (16, 32, 16))]
    + sep("df.convp", "/df_convp/df_convp.1/Conv", "/df_convp/df_convp.2/Conv", (10, 32, 5, 1), (10, 10, 1, 1))
    + [("df.out.w", "/df_out/df_out.0/Einsum", 1, (16, 16, 60))],
}

# Attributes the forward pass assumes, per node (others are checked by shape alone).
ATTRS = {
    "/erb_conv0/1/Conv": {"group": 1, "strides": [1, 1], "pads": [0, 1, 0, 1]},
    "/erb_conv1/0/Conv": {"group": 64, "strides": [1, 2], "pads": [0, 1, 0, 1]},
    "/erb_conv2/Conv": {"group": 64, "strides": [1, 2], "pads": [0, 1, 0, 1]},
    "/erb_conv3/0/Conv": {"group": 64, "strides": [1, 1], "pads": [0, 1, 0, 1]},
    "/df_conv0/1/Conv": {"group": 2, "strides": [1, 1], "pads": [0, 1, 0, 1]},
    "/df_conv1/Conv": {"group": 64, "strides": [1, 2], "pads": [0, 1, 0, 1]},
    "/emb_gru/GRU": {"hidden_size": 256, "linear_before_reset": 1},
    "/emb_gru/GRU_1": {"hidden_size": 256, "linear_before_reset": 1},
    "/df_gru/gru/GRU": {"hidden_size": 256, "linear_before_reset": 1},
    "/df_gru/gru/GRU_1": {"hidden_size": 256, "linear_before_reset": 1},
    "/convt3/Conv": {"group": 64, "strides": [1, 1], "pads": [0, 1, 0, 1]},
    "/convt2/0/ConvTranspose": {"group": 64, "strides": [1, 2], "pads": [0, 1, 0, 1], "output_padding": [0, 1]},
    "/convt1/ConvTranspose": {"group": 64, "strides": [1, 2], "pads": [0, 1, 0, 1], "output_padding": [0, 1]},
    "/conv0_out/0/Conv": {"group": 1, "strides": [1, 1], "pads": [0, 1, 0, 1]},
    "/df_convp/df_convp.1/Conv": {"group": 2, "strides": [1, 1], "pads": [0, 0, 0, 0]},
}


class ConvertError(Exception):
    pass


def graph_tensor(graph, inits, consts, node_name, index):
    node = next((n for n in graph.node if n.name == node_name), None)
    if node is None:
        raise ConvertError(f"node {node_name} not found")
    want = ATTRS.get(node_name, {})
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    for key, value in want.items():
        got = attrs.get(key)
        if isinstance(got, list):
            got = list(got)
        if got != value:
            raise ConvertError(f"node {node_name}: {key} is {got}, the engine implements {value}")
    src = node.input[index]
    if src in inits:
        return inits[src]
    if src in consts:
        return consts[src]
    raise ConvertError(f"node {node_name}: input {index} ({src}) is not a constant")


def graph_arrays(model, name):
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    consts = {}
    for n in graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = numpy_helper.to_array(a.t)
    out = []
    for flat, node_name, index, shape in TENSORS[name]:
        arr = graph_tensor(graph, inits, consts, node_name, index)
        if tuple(arr.shape) != shape:
            raise ConvertError(f"{name}.onnx {node_name}: {flat} has shape {tuple(arr.shape)}, expected {shape}")
        arr = np.ascontiguousarray(arr, dtype="<f4")
        if not np.all(np.isfinite(arr)):
            raise ConvertError(f"{name}.onnx {node_name}: {flat} holds NaN or Inf")
        out.append((flat, arr))
    return out


def read_tarball(path):
    members = {}
    with tarfile.open(path, "r:gz") as tar:
        for m in tar.getmembers():
            base = m.name.rsplit("/", 1)[-1]
            if m.isfile() and base in ("enc.onnx", "erb_dec.onnx", "df_dec.onnx", "config.ini"):
                members[base] = tar.extractfile(m).read()
    for need in ("enc.onnx", "erb_dec.onnx", "df_dec.onnx", "config.ini"):
        if need not in members:
            raise ConvertError(f"{path}: no {need} in the archive")
    return members


def config_tensor(text):
    cp = configparser.ConfigParser()
    cp.read_string(text)
    if cp.get("train", "model", fallback="") != "deepfilternet3":
        raise ConvertError("config.ini: [train] model is not deepfilternet3")
    vals = []
    for key, want in CONFIG_KEYS:
        got = cp.getfloat("df", key, fallback=None)
        if got is None:
            raise ConvertError(f"config.ini: [df] {key} missing")
        if got != want:
            raise ConvertError(f"config.ini: [df] {key} = {got}, the engine implements {want}")
        vals.append(got)
    return np.array(vals, dtype="<f4")


def write_flat(path, tensors):
    buf = io.BytesIO()
    buf.write(MAGIC + struct.pack("<II", VERSION, len(tensors)))
    for name, arr in tensors:
        raw = name.encode("ascii")
        buf.write(struct.pack("<I", len(raw)) + raw + struct.pack("<I", arr.ndim))
        buf.write(struct.pack(f"<{arr.ndim}I", *arr.shape) + arr.tobytes())
    body = buf.getvalue()
    with open(path, "wb") as f:
        f.write(body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF))


def main(argv):
    if len(argv) != 3:
        print("usage: dfn-convert.py DeepFilterNet3_onnx.tar.gz OUT.dfn", file=sys.stderr)
        return 2
    try:
        members = read_tarball(argv[1])
        tensors = [("config", config_tensor(members["config.ini"].decode()))]
        for name in ("enc", "erb_dec", "df_dec"):
            try:
                model = onnx.load_model_from_string(members[name + ".onnx"])
            except Exception as e:  # protobuf's and onnx's own errors
                raise ConvertError(f"{name}.onnx is not a readable ONNX model: {type(e).__name__}: {e}") from e
            tensors += graph_arrays(model, name)
        write_flat(argv[2], tensors)
    except ConvertError as e:
        print(f"dfn-convert: {e}", file=sys.stderr)
        return 1
    except (OSError, tarfile.TarError) as e:
        print(f"dfn-convert: {argv[1]}: {e}", file=sys.stderr)
        return 1
    n = sum(a.size for _, a in tensors)
    print(f"dfn-convert: {argv[2]}: {len(tensors)} tensors, {n} weights")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
