"""The NumPy GPT: equal to PyTorch (committed fixture, and live when torch is installed), KV cache,
weights format, sampling."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from minigpt.bpe import load_tokenizer
from minigpt.checkpoint import load_weights, save_weights
from minigpt.config import GPTConfig, parameter_shapes
from minigpt.gpt import GPT, load_model
from minigpt.sample import generate, next_token_probs, top_tokens

ROOT = Path(__file__).parents[2]
FIXTURE = ROOT / "tests" / "minigpt" / "fixtures" / "reference_logits.npz"
HAS_TORCH = importlib.util.find_spec("torch") is not None
ATOL = 1e-4


@pytest.fixture(scope="module")
def model():
    return load_model()


def random_params(cfg: GPTConfig, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {n: (rng.standard_normal(s) * 0.2).astype(np.float32) for n, s in parameter_shapes(cfg).items()}


def test_matches_committed_pytorch_logits(model):
    ref = np.load(FIXTURE, allow_pickle=False)
    n = len([k for k in ref.files if k.startswith("ids_")])
    assert n >= 3
    for i in range(n):
        ids, expected = ref[f"ids_{i}"], ref[f"logits_{i}"]
        got = model.forward(ids[None])[0]
        assert got.shape == expected.shape == (len(ids), 512)
        assert np.abs(got - expected).max() <= ATOL


def test_fixture_prompts_tokenize_the_same():
    """The fixture's ids are what the committed tokenizer gives for the reference prompts."""
    pytest.importorskip("torch")
    from minigpt.train import REFERENCE_PROMPTS
    ref, tok = np.load(FIXTURE), load_tokenizer()
    for i, prompt in enumerate(REFERENCE_PROMPTS):
        assert ref[f"ids_{i}"].tolist() == tok.encode(prompt)


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (requirements-train.txt)")
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_live_pytorch(seed):
    import torch
    from minigpt.train import TorchGPT
    cfg = GPTConfig(n_layer=2, n_head=3, n_embd=48, n_ctx=40, dropout=0.0)
    params = random_params(cfg, seed)
    ids = np.random.default_rng(seed).integers(0, 512, size=(3, 40))
    with torch.no_grad():
        expected = TorchGPT.from_params(cfg, params)(torch.from_numpy(ids)).numpy()
    assert np.abs(GPT(cfg, params).forward(ids) - expected).max() <= ATOL


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (requirements-train.txt)")
def test_trained_weights_match_live_pytorch(model):
    import torch
    from minigpt.train import TorchGPT
    cfg, params, _ = load_weights(ROOT / "weights")
    ids = np.random.default_rng(5).integers(0, 512, size=(2, 256))
    with torch.no_grad():
        expected = TorchGPT.from_params(cfg, params)(torch.from_numpy(ids)).numpy()
    assert np.abs(model.forward(ids) - expected).max() <= ATOL


def test_kv_cache_equals_full_forward():
    cfg = GPTConfig(n_layer=2, n_head=2, n_embd=32, n_ctx=24)
    m = GPT(cfg, random_params(cfg, 3))
    ids = np.random.default_rng(0).integers(0, 512, size=(4, 24))
    full = m.forward(ids)
    cache = m.new_cache(4)
    parts = [m.step(ids[:, :5], cache)] + [m.step(ids[:, t:t + 1], cache) for t in range(5, 20)]
    parts.append(m.step(ids[:, 20:], cache))
    assert cache.length == 24
    assert np.abs(np.concatenate(parts, axis=1) - full).max() <= 1e-5


def test_cache_select_branches_rows():
    cfg = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=10)
    m = GPT(cfg, random_params(cfg, 4))
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    cache = m.new_cache(2)
    m.step(ids, cache)
    branch = cache.select([1, 1, 0])
    nxt = np.array([[7], [8], [9]])
    got = m.step(nxt, branch)[:, 0]
    want = m.forward(np.concatenate([ids[[1, 1, 0]], nxt], axis=1))[:, -1]
    assert np.abs(got - want).max() <= 1e-5


@pytest.mark.parametrize("einsum", [False, True])  # True: the code path Pyodide takes
def test_branched_cache_shares_the_prefix_and_equals_full_forward(einsum, monkeypatch):
    import minigpt.gpt as gpt
    monkeypatch.setattr(gpt, "USE_EINSUM", einsum)
    cfg = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=16)
    m = GPT(cfg, random_params(cfg, 5), dtype=np.float64)
    prompt = np.array([[3, 1, 4, 1, 5]])
    root = m.new_cache(1)
    m.step(prompt, root)
    rows = np.array([[9, 2], [6, 5], [9, 3]])
    branch = root.branch(3, capacity=1)  # too small on purpose: the cache must grow
    first = m.step(rows[:, :1], branch)[:, 0]
    second = m.step(rows[:, 1:], branch.select([0, 1, 2]))[:, 0]
    full = m.forward(np.concatenate([np.repeat(prompt, 3, axis=0), rows], axis=1))
    assert np.abs(first - full[:, 5]).max() <= 1e-10
    assert np.abs(second - full[:, 6]).max() <= 1e-10
    assert branch.k[0].shape[2] < 16 and branch.length == 6  # the prefix was not copied
    with pytest.raises(ValueError, match="batch-1"):
        branch.branch(2)


def test_float64_model_agrees_with_float32(model):
    ids = np.array([load_tokenizer().encode("La señora de Bringas")])
    f32 = model.forward(ids)
    f64 = model.astype(np.float64).forward(ids)
    assert f64.dtype == np.float64 and f32.dtype == np.float32
    assert np.abs(f64 - f32).max() <= ATOL
    assert model.astype(np.float32) is model


def test_einsum_path_used_in_pyodide_equals_blas_path(model, monkeypatch):
    import minigpt.gpt as gpt
    m64 = model.astype(np.float64)
    ids = np.array([[5, 300, 40, 41, 10]] * 2)
    blas = m64.forward(ids)
    monkeypatch.setattr(gpt, "USE_EINSUM", True)
    assert np.abs(m64.forward(ids) - blas).max() <= 1e-10


def test_context_and_input_errors():
    cfg = GPTConfig(n_layer=1, n_head=1, n_embd=8, n_ctx=4)
    m = GPT(cfg, random_params(cfg))
    with pytest.raises(ValueError, match="context overflow"):
        m.forward(np.zeros((1, 5), dtype=int))
    with pytest.raises(ValueError, match="token ids"):
        m.forward(np.array([[512]]))
    cache = m.new_cache(2)
    with pytest.raises(ValueError, match="batch"):
        m.step(np.zeros((1, 1), dtype=int), cache)


def test_weights_round_trip_and_damage(tmp_path):
    cfg = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=6)
    params = random_params(cfg, 7)
    save_weights(tmp_path, cfg, params, training={"note": "test"})
    cfg2, params2, manifest = load_weights(tmp_path)
    assert cfg2 == cfg and manifest["training"] == {"note": "test"}
    assert all(np.array_equal(params[n], params2[n]) for n in params)
    data = bytearray((tmp_path / "model.bin").read_bytes())
    data[10] ^= 1
    (tmp_path / "model.bin").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256"):
        load_weights(tmp_path)
    with pytest.raises(ValueError, match="shape"):
        save_weights(tmp_path, cfg, {**params, "wte": params["wte"][:3]})


def test_committed_weights_size_and_format():
    _, params, manifest = load_weights(ROOT / "weights")
    assert manifest["bin"]["nbytes"] <= 16 * 1024 * 1024
    assert all(p.dtype == np.float32 for p in params.values())


def test_generation_is_seeded_and_probabilities_are_a_distribution(model):
    tok = load_tokenizer()
    ids = tok.encode("Benina")
    a = generate(model, ids, 20, seed=3)
    assert a == generate(model, ids, 20, seed=3)
    assert len(a) == 20 and all(0 <= i < 512 for i in a)
    p = next_token_probs(model, ids)
    assert p.shape == (512,) and abs(p.sum() - 1) < 1e-9 and (p >= 0).all()
    top = top_tokens(tok, p, 5)
    assert [t[2] for t in top] == sorted(p, reverse=True)[:5]


def test_generation_slides_past_the_context():
    cfg = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=8)
    m = GPT(cfg, random_params(cfg, 9))
    out = generate(m, [1, 2, 3], 30, seed=0)
    assert len(out) == 30


def test_sample_command_prints_top_tokens_and_continuation(capsys):
    from minigpt.sample import main
    main(["--prompt", "Benina", "--tokens", "5", "--top", "3", "--seed", "2"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("top 3 next tokens")
    probs = [float(line.rsplit("p=", 1)[1]) for line in out[1:4]]
    assert probs == sorted(probs, reverse=True) and all(0 < p <= 1 for p in probs)
    assert out[4] == "" and out[5].startswith("Benina")
    with pytest.raises(SystemExit):
        main(["--prompt", "x", "--temperature", "0"])


def test_eval_command_ends_with_bits_per_byte(capsys):
    from minigpt.data import CORPUS_FILES, default_corpus_dir
    if not all((default_corpus_dir() / f).exists() for f in CORPUS_FILES):
        pytest.skip("the corpus is not beside the repository (../shared/corpus)")
    from minigpt.eval import main
    main([])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("val_bpb=") and 0 < float(last.split("=")[1]) <= 2.0


def write_float16_copy(source: Path, target: Path) -> None:
    """``target`` gets ``float16_copy`` of ``source``'s model and its tokenizer files."""
    import json
    from minigpt.checkpoint import float16_copy
    manifest = json.loads((source / "model.json").read_text(encoding="utf-8"))
    half_manifest, half = float16_copy(manifest, (source / "model.bin").read_bytes())
    target.mkdir(exist_ok=True)
    (target / "model.json").write_text(json.dumps(half_manifest), encoding="utf-8")
    (target / "model.bin").write_bytes(half)
    for name in ("merges.txt", "vocab.txt"):
        if (source / name).exists():
            (target / name).write_bytes((source / name).read_bytes())


def test_float16_copy_loads_as_the_rounded_float32_values(tmp_path):
    cfg = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=6)
    params = random_params(cfg, 11)
    params["wte"][0, :3] = [1e-9, -35000.0, 65504.0]  # below float16's subnormals, large, the largest
    (tmp_path / "f32").mkdir()
    save_weights(tmp_path / "f32", cfg, params)
    write_float16_copy(tmp_path / "f32", tmp_path / "f16")
    cfg2, params2, manifest = load_weights(tmp_path / "f16")
    assert cfg2 == cfg
    assert {t["dtype"] for t in manifest["tensors"]} == {"float16"}
    assert manifest["bin"]["nbytes"] * 2 == (tmp_path / "f32" / "model.bin").stat().st_size
    for name, value in params.items():
        assert params2[name].dtype == np.float32 and params2[name].shape == value.shape
        assert np.array_equal(params2[name], value.astype(np.float16).astype(np.float32))
        # nearest float16: relative error at most 2**-11 for normal values
        normal = np.abs(value) >= np.finfo(np.float16).tiny
        assert np.all(np.abs(params2[name] - value)[normal] <= 2.0 ** -11 * np.abs(value)[normal])


def test_float16_copy_refuses_what_float16_cannot_hold():
    from minigpt.checkpoint import float16_copy
    data = np.array([1.0, 70000.0], dtype="<f4").tobytes()
    manifest = {"tensors": [{"name": "x", "shape": [2], "dtype": "float32", "offset": 0, "nbytes": 8}],
                "bin": {"file": "model.bin", "nbytes": 8, "sha256": ""}}
    with pytest.raises(ValueError, match="does not fit float16"):
        float16_copy(manifest, data)
    manifest["tensors"][0]["dtype"] = "float16"
    with pytest.raises(ValueError, match="expected float32"):
        float16_copy(manifest, data)


def test_float16_weights_give_the_float32_models_probabilities(tmp_path, model):
    """The site ships the committed model rounded to float16 (``sitebuild.files.site_weights``).
    On the reference prompts and a long sample of the training text, its next-token probabilities
    equal the float32 model's to 1e-3 at every position; its logits differ by a few thousandths
    (the rounding's relative error, 2**-11, grows through four blocks)."""
    write_float16_copy(ROOT / "weights", tmp_path)
    half = load_model(tmp_path)
    ref = np.load(FIXTURE, allow_pickle=False)
    prompts = [ref[k] for k in ref.files if k.startswith("ids_")]
    prompts.append(np.random.default_rng(2).integers(0, 512, size=256))
    for ids in prompts:
        full, rounded = model.forward(ids[None])[0], half.forward(ids[None])[0]
        p, q = softmax(full), softmax(rounded)
        assert np.abs(p - q).max() <= 1e-3
        assert np.abs(full - rounded).max() <= 3e-2


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
