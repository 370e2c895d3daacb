import numpy as np
from rawread import read_logdir

import tb_aggregate_plugin as tba


def test_strict_mean_matches_numpy(real_logs):
    df = tba.aggregate(str(real_logs / "strict"))
    raw = read_logdir(str(real_logs / "strict"))
    values = [[v for _, _, v in raw[run]["strict/foo"]] for run in sorted(raw)]
    np.testing.assert_allclose(df["mean"].to_numpy(), np.mean(values, axis=0), rtol=0, atol=1e-9)
