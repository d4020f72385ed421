"""The same BERT or MPNet encoder as :mod:`~dualdecomp.models.neural.encoder`, run by onnxruntime.

:func:`encoder_graph` writes the forward pass of :class:`~dualdecomp.models.neural.encoder.Encoder` —
embeddings, post-layer-norm self-attention and feed-forward blocks with the exact GELU — as an ONNX graph
(opset 20: ``LayerNormalization``, ``Gelu``) whose initializers are the encoder's float32 parameters (for
MPNet also its relative-position bias of the longest input, of which a run slices the (heads, T, T)
corner and adds it to every layer's scaled scores). The graph is built in memory when a model is loaded,
from the same ``weights.npz``, so no second copy of the weights ships and the two paths cannot drift
apart. :class:`OnnxEncoder` runs it with onnxruntime on the CPU; its outputs equal the numpy encoder's up
to float32 rounding (checked in the tests).

Why: onnxruntime's fused kernels and intra-op threads run the encoder of a 30-token sentence about twice
as fast as numpy on the 2-core machine (``make neural-bench``). The numpy encoder stays the reference and
the fallback where onnxruntime is missing.

With ``int8=True`` the graph's six matrix products per layer are onnxruntime's ``DynamicQuantizeMatMul``
(com.microsoft): the weights as int8 with one float32 scale per output column, the activations
quantised to uint8 per tensor at run time, int32 accumulation (VNNI/AMX kernels where the CPU has them).
Where the CPU has neither, onnxruntime's uint8 x int8 kernels add pairs of products in 16 bits and saturate,
so there the graph takes each weight as uint8 ``q + 128`` with zero point 128 (:func:`signed_weights_exact`):
the same integer sums, exactly, by the uint8 x uint8 kernels.
The weight side is the stored model itself: ``weights.npz`` keeps each matrix as int8 rows with a scale per
row (:func:`~dualdecomp.models.neural.store.quantise_rows`), a row being an output column here. The loader
hands those rows to the graph as they are (:class:`~dualdecomp.models.neural.encoder.Int8Matrix`, no
float32 copy of the matrices is made); :func:`quantise_columns` of the dequantised matrix, the path of a
float32 encoder, gives the very same rows and scales. The activation
side moves the scores (docs/components/neural.md has the measurements); the graph is float32 by default.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from dualdecomp.core.cpu_info import is_x86, read_cpu_info
from dualdecomp.models.neural.encoder import EncoderConfig, EncoderParts, Int8Matrix, checked_ids

__all__ = ["OnnxEncoder", "default_threads", "encoder_graph", "onnx_available", "quantise_columns",
           "signed_weights_exact"]

OPSET = 20
MS_DOMAIN = "com.microsoft"
MS_OPSET = 1


def quantise_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantisation of each column: ``matrix ≈ q * scale[None, :]``.

    The same rule as :func:`~dualdecomp.models.neural.store.quantise_rows` on the transpose (scale =
    max |column| / 127, an all-zero column gets scale 1), so for a matrix dequantised from stored int8 rows
    it returns the stored rows (transposed) and their scales.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        int8 ``q`` of the same shape and float32 ``scale`` (columns,).
    """
    m = np.asarray(matrix, dtype=np.float32)
    peak = np.abs(m).max(axis=0)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(m / scale[None, :]), -127, 127).astype(np.int8)
    return q, scale


def onnx_available() -> bool:
    """Whether ``onnx`` and ``onnxruntime`` import."""
    try:
        import onnx  # noqa: F401  # lazy: only probes whether the optional backend is installed
        import onnxruntime  # noqa: F401  # lazy: only probes whether the optional backend is installed
    except ImportError:
        return False
    return True


def default_threads() -> int:
    """``OMP_NUM_THREADS`` if it is a positive integer, else 0 (onnxruntime chooses)."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 0


EXACT_SIGNED_FLAGS = frozenset({"avx512_vnni", "amx_int8"})
"""The ``/proc/cpuinfo`` flags with which onnxruntime's uint8 x int8 products sum exactly on x86."""


@functools.cache
def signed_weights_exact() -> bool:
    """Whether onnxruntime sums uint8 activations times **int8** weights exactly on this CPU.

    On x86 without AVX-512 VNNI or AMX, onnxruntime's uint8 x int8 kernels multiply with ``vpmaddubsw``,
    which adds each two neighbouring products in 16 bits and saturates (255 x 127 x 2 does not fit):
    with MPNet's weights a third of the MPNet token scorer's keep decisions flipped on such a CPU (an
    AMD EPYC with AVX2 only). VNNI's ``vpdpbusd`` and AMX add the products in 32 bits; other
    architectures' kernels widen before they add. Where the CPU's flags cannot be read (no
    ``/proc/cpuinfo``), numpy's record of AVX-512 VNNI decides; where that is missing too, the answer is
    no (the unsigned weights are exact everywhere, only slower).
    """
    if not is_x86():
        return True
    flags = read_cpu_info().flags
    if flags is not None:
        return not EXACT_SIGNED_FLAGS.isdisjoint(flags)
    try:
        from numpy._core._multiarray_umath import __cpu_features__  # lazy: numpy's private CPU record
    except ImportError:
        return False
    return bool(__cpu_features__.get("AVX512VNNI", False))


def unsigned_weights(q: np.ndarray) -> np.ndarray:
    """int8 ``q`` as uint8 ``q + 128`` (a new array): with zero point 128, the same integers."""
    return np.ascontiguousarray(q).view(np.uint8) ^ np.uint8(0x80)


def encoder_graph(encoder: EncoderParts, int8: bool = False,
                  unsigned: bool | None = None) -> tuple[bytes, dict[str, np.ndarray]]:
    """The encoder's forward pass as a serialised ONNX model whose weights stay outside it.

    Parameters
    ----------
    encoder : EncoderParts
        The encoder's parameters (a numpy :class:`~dualdecomp.models.neural.encoder.Encoder`, or parts
        whose block matrices are :class:`~dualdecomp.models.neural.encoder.Int8Matrix`), which become the
        graph's initializers.
    int8 : bool
        Write each dense layer as ``DynamicQuantizeMatMul`` over its int8 columns and scales (an
        :class:`~dualdecomp.models.neural.encoder.Int8Matrix` as it is, a float32 matrix through
        :func:`quantise_columns`: the same numbers for a matrix dequantised from stored rows) instead of
        a float32 ``MatMul`` (of an ``Int8Matrix`` dequantised).
    unsigned : bool, optional
        For the int8 graph: hand the weights to ``DynamicQuantizeMatMul`` as uint8 ``q + 128`` with zero
        point 128 (onnxruntime's uint8 x uint8 kernels, which sum exactly on every CPU) instead of int8
        ``q``. Both give the same integer sums where both are exact (so the same scores, up to float
        rounding). By default
        (None), unsigned unless :func:`signed_weights_exact`.

    Returns
    -------
    model : bytes
        An ONNX ``ModelProto``: input ``ids`` (int64, (T,)), output ``hidden`` (float32, (T, hidden)).
        Every initializer is marked as external data, so the bytes hold the graph only.
    weights : dict of str to numpy.ndarray
        The initializers' values by name (contiguous arrays; views of the encoder's where possible), to be
        handed to onnxruntime with ``SessionOptions.add_external_initializers``: the session reads them in
        place instead of holding a second copy of the weights.
    """
    from onnx import TensorProto, helper, numpy_helper  # lazy: the numpy backend works without onnx

    if int8 and unsigned is None:  # the float32 graph has no integer weights to choose for
        unsigned = not signed_weights_exact()
    cfg: EncoderConfig = encoder.config
    h, heads = cfg.hidden_size, cfg.num_attention_heads
    dh = h // heads
    eps = cfg.layer_norm_eps
    nodes: list = []
    inits: list = []
    weights: dict[str, np.ndarray] = {}

    def const(name: str, value: np.ndarray) -> str:
        value = np.ascontiguousarray(value)
        if value.size < 64:  # shapes and scalars stay in the graph
            inits.append(numpy_helper.from_array(value, name))
            return name
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(value.dtype),
                             dims=value.shape)
        tensor.data_location = TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", name
        inits.append(tensor)
        weights[name] = value
        return name

    def node(op: str, inputs: list[str], output: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def linear(x: str, w: np.ndarray | Int8Matrix, b: np.ndarray, name: str) -> str:
        if int8:  # bias fused into the op
            q, scale = (w.values, w.scale) if isinstance(w, Int8Matrix) else quantise_columns(w)
            if unsigned:  # the same integers: uint8 q + 128 with zero point 128 (see signed_weights_exact)
                weights_in = [const(name + ".wq", unsigned_weights(q)), const(name + ".ws", scale),
                              const(name + ".wz", np.full(q.shape[1], 128, np.uint8))]
            else:
                weights_in = [const(name + ".wq", q), const(name + ".ws", scale), ""]
            return node("DynamicQuantizeMatMul", [x, *weights_in, const(name + ".b", b)], name,
                        domain=MS_DOMAIN)
        matrix = w.dequantised() if isinstance(w, Int8Matrix) else w
        product = node("MatMul", [x, const(name + ".w", matrix)], name + ".mm")
        return node("Add", [product, const(name + ".b", b)], name)

    def layer_norm(x: str, norm: tuple[np.ndarray, np.ndarray], name: str) -> str:
        gamma, beta = norm
        return node("LayerNormalization", [x, const(name + ".g", gamma), const(name + ".beta", beta)], name,
                    axis=-1, epsilon=eps)

    i64 = np.int64
    zero = const("zero", np.array([0], i64))
    length = node("Shape", ["ids"], "length")
    table = const("position_table", encoder.position_table)
    positions = node("Slice", [table, zero, length, zero], "positions")
    words = node("Gather", [const("word_table", encoder.word_table), "ids"], "words")
    summed = node("Add", [words, positions], "emb.wp")
    if encoder.segment0 is not None:
        summed = node("Add", [summed, const("segment0", encoder.segment0)], "emb.sum")
    x = layer_norm(summed, encoder.embed_norm, "emb.norm")
    bias = None
    if encoder.attention_bias is not None:  # MPNet: the (heads, T, T) corner of the precomputed bias
        longest = const("attention_bias", encoder.attention_bias)
        ends = node("Concat", [length, length], "bias.ends", axis=0)
        bias = node("Slice", [longest, const("bias.starts", np.zeros(2, i64)), ends,
                              const("bias.axes", np.array([1, 2], i64))], "bias")
    heads_shape = const("heads_shape", np.array([0, heads, dh], i64))
    flat_shape = const("flat_shape", np.array([0, h], i64))
    scale = const("scale", np.array(1.0 / math.sqrt(dh), np.float32))
    thirds = const("thirds", np.array([h, h, h], i64))
    for k, layer in enumerate(encoder.layers):
        p = f"l{k}."
        qkv = linear(x, layer.qkv_w, layer.qkv_b, p + "qkv")  # one (T, 3h) product, queries first
        parts = [p + part for part in ("q", "k", "v")]
        nodes.append(helper.make_node("Split", [qkv, thirds], parts, name=p + "split", axis=1))
        q, key, v = (node("Transpose", [node("Reshape", [part, heads_shape], part + ".r")], part + ".t",
                          perm=[1, 0, 2]) for part in parts)
        key_t = node("Transpose", [key], p + "kt", perm=[0, 2, 1])
        scores = node("Mul", [node("MatMul", [q, key_t], p + "qk"), scale], p + "scores")
        if bias is not None:
            scores = node("Add", [scores, bias], p + "biased")
        attention = node("Softmax", [scores], p + "attn", axis=-1)
        context = node("Reshape", [node("Transpose", [node("MatMul", [attention, v], p + "ctx.h")],
                                        p + "ctx.t", perm=[1, 0, 2]), flat_shape], p + "ctx")
        attended = node("Add", [linear(context, layer.out_w, layer.out_b, p + "out"), x], p + "res1")
        x = layer_norm(attended, layer.norm1, p + "norm1")
        hidden = node("Gelu", [linear(x, layer.ff_in_w, layer.ff_in_b, p + "ff_in")], p + "gelu")
        fed = node("Add", [linear(hidden, layer.ff_out_w, layer.ff_out_b, p + "ff_out"), x], p + "res2")
        x = layer_norm(fed, layer.norm2, p + "norm2")
    nodes[-1].output[0] = "hidden"
    graph = helper.make_graph(
        nodes, "dualdecomp-encoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["T"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["T", h])],
        initializer=inits)
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid(MS_DOMAIN, MS_OPSET)] if int8 else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="dualdecomp")
    model.ir_version = 10
    return model.SerializeToString(), weights


_POOL: list[int] = []
"""The intra-op size of onnxruntime's process-wide thread pool, once made (0: onnxruntime's choice)."""


def _shared_pool(threads: int) -> int:
    """Make onnxruntime's process-wide thread pool (``threads`` intra-op threads, one inter-op) the first
    time an encoder is built, and return its size. Every session shares it: with a pool per session,
    two encoders in one process (the unary scorer and the chain scorer of ``neural-chain-mcdonald``)
    spin their own threads after each run and take each other's cores (15.5 against 9.8 ms for the two
    encoders of a 27-token sentence on the 2-core machine)."""
    if not _POOL:
        from onnxruntime.capi import _pybind_state  # lazy: onnxruntime is optional

        _pybind_state.set_global_thread_pool_sizes(threads, 1)
        _POOL.append(threads)
    return _POOL[0]


class OnnxEncoder:
    """An :class:`Encoder`'s forward pass run by onnxruntime (same call, same outputs).

    Parameters
    ----------
    encoder : EncoderParts
        The encoder's parameters and sizes (a numpy :class:`~dualdecomp.models.neural.encoder.Encoder`,
        or parts read for the int8 graph: :func:`~dualdecomp.models.neural.encoder.encoder_parts`).
    threads : int, optional
        onnxruntime intra-op threads. By default ``OMP_NUM_THREADS`` when it is set to a positive integer
        (as Dask sets it to 1 in its worker processes, so ``--workers N`` does not oversubscribe the
        cores), else onnxruntime's own choice (one per physical core). Every session runs on one
        process-wide pool (:func:`_shared_pool`), made with the first encoder's count; ``threads``
        (the attribute) is the pool's.
    int8 : bool
        Run the int8 graph (:func:`encoder_graph`): faster on CPUs with VNNI, scores moved slightly.
    options : onnxruntime.SessionOptions, optional
        Session options to use as given (threads, spinning, optimisation level: the benchmarks compare
        them) instead of the shared pool and full graph optimisation; ``threads`` is then
        ``options.intra_op_num_threads``.
    unsigned : bool, optional
        The int8 graph's weights as uint8 (see :func:`encoder_graph`); by default chosen by the CPU.
    """

    def __init__(self, encoder: EncoderParts, threads: int | None = None, int8: bool = False,
                 options=None, unsigned: bool | None = None) -> None:
        import onnxruntime as ort  # lazy: the numpy backend works without onnxruntime

        self.config = encoder.config
        self.int8 = bool(int8)
        if options is None:
            options = ort.SessionOptions()
            self.threads = _shared_pool(default_threads() if threads is None else threads)
            options.use_per_session_threads = False
            options.log_severity_level = 3  # errors only: no optimiser notes on the user's terminal
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        else:
            self.threads = options.intra_op_num_threads
        graph, weights = encoder_graph(encoder, int8=self.int8, unsigned=unsigned)
        self._weights = weights  # the session reads these buffers in place: keep them alive
        options.add_external_initializers(list(weights), [ort.OrtValue.ortvalue_from_numpy(w)
                                                          for w in weights.values()])
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """The last layer's hidden states of one sequence of word-piece ids (see :meth:`Encoder.__call__`)."""
        return self._session.run(["hidden"], {"ids": checked_ids(ids, self.config)})[0]
