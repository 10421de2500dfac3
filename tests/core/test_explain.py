"""maxflops.explain: the conventions that reproduce a published figure, to its printed rounding."""

import json

import pytest

import maxflops
from maxflops import cli
from peers.test_published_figures import PALM_540B


def test_maxtext_pr1988_figure_is_the_whole_square():
    cfg = maxflops.load_config("llama2-7b", max_target_length=8192, per_device_batch_size=4)
    e = maxflops.explain(cfg, tflop_per_step="1721.22")
    hits = {c.convention for c in e.candidates if c.reproduces}
    assert hits == {"maxtext_pr1988_before", "palm", "megatron_papers"}  # the whole square, nothing else differs
    assert e.candidates[0].reproduces and not any(c.reproduces for c in e.candidates[len(hits):])
    after = maxflops.explain(cfg, tflop_per_step="1510.11")
    assert "maxtext" in {c.convention for c in after.candidates if c.reproduces}
    assert "maxtext_pr1988_before" not in {c.convention for c in after.candidates if c.reproduces}


def test_palm_mfu_over_its_cluster():
    e = maxflops.explain(maxflops.model_config(**PALM_540B), mfu="46.2", peak_tflops="275", tokens_per_s="238.3e3",
                         devices=6144)
    assert {c.convention for c in e.candidates if c.reproduces} == {"maxtext_pr1988_before", "palm", "megatron_papers"}
    # 46.2% of 275 TFLOP/s over 238.3K tokens/s on 6,144 chips, each figure +- half its last digit
    assert e.low == pytest.approx(0.4615 * 274.5e12 * 6144 / 238.35e3, rel=1e-12)
    assert e.high == pytest.approx(0.4625 * 275.5e12 * 6144 / 238.25e3, rel=1e-12)
    exact = next(c for c in e.candidates if c.convention == "exact")
    assert not exact.reproduces and f"{exact.ratio:.3f}" == "0.995"


def test_mtp_counted_or_not_is_a_variant():
    cfg = maxflops.load_config("glm5", max_target_length=4096)
    b = maxflops.count(cfg, mtp_num_layers=0, convention="maxtext")
    e = maxflops.explain(cfg, tflop_per_step=f"{b.total / 1e12:.2f}")
    assert any(c.reproduces and c.convention == "maxtext" and c.variant == "without MTP" for c in e.candidates)


def test_from_the_command_line_and_bad_figures(capsys):
    argv = ["maxflops", "explain", "llama2-7b", "--config.max_target_length=8192", "--config.per_device_batch_size=4"]
    assert cli.main(argv + ["--tflop-per-step=1721.22"]) == 0
    out = capsys.readouterr().out
    assert "reproduced by maxtext_pr1988_before, megatron_papers, palm" in out
    assert cli.main(argv + ["--tflop-per-step=1721.22", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["candidates"][0]["reproduces"] is True
    for bad, said in ((["--mfu=46.2"], "give one figure as printed"), (["--tflop-per-step=abc"], "not a number"),
                      (["--tflop-per-step=-3"], "a positive number"),
                      (["--tflop-per-step=1", "--devices=8"], "this figure has neither"),
                      (["--tflop-per-step=1", "--devices=x"], "expected a positive integer")):
        assert cli.main(argv + bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err, err
    with pytest.raises(ValueError, match="a training figure"):
        maxflops.explain(maxflops.load_config("llama2-7b", mode="prefill"), tflop_per_step="1")


def test_a_model_only_some_conventions_price():
    """Kimi K3's attention residuals: Megatron-Bridge's function and the exact count's weights have a rule for them,
    the others none; explain ranks those that do and refuses nothing."""
    from maxflops.conventions import convention_defined
    from maxflops.config import validate

    cfg = maxflops.load_config("kimi-k3")
    e = maxflops.explain(cfg, mfu="40.0", peak_tflops="989", tokens_per_s="1000")
    c = validate(cfg)
    assert {x.convention for x in e.candidates} == {n for n in maxflops.CONVENTIONS if convention_defined(c, n)} \
        == {"exact", "megatron_bridge", "six_n", "kaplan"}
