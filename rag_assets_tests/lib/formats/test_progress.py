from rag_assets.lib.formats.progress import Progress, eta_text


def test_the_time_left_is_the_pace_so_far():
    assert eta_text(0, 100, 0.0) == "0% done"
    assert eta_text(25, 100, 30.0) == "25% done, about 1 min 30 s left"
    assert eta_text(50, 100, 3600.0) == "50% done, about 1 h 0 min left"
    assert eta_text(100, 100, 42.0) == "done in 42 s"
    assert eta_text(0, 0, 1.0) == "nothing to do"


def test_reports_are_throttled_but_the_last_always_comes():
    now, said = [0.0], []
    progress = Progress("embedded", said.append, every=5.0, clock=lambda: now[0])
    for done, at in ((10, 1.0), (20, 2.0), (30, 7.0), (40, 8.0), (50, 9.0)):
        now[0] = at
        progress(done, 50)
    assert said == ["embedded 10/50 (20% done, about 4 s left)", "embedded 30/50 (60% done, about 5 s left)",
                    "embedded 50/50 (done in 9 s)"]
