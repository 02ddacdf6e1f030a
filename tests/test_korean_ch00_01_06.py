"""The Korean edition of chapters 00, 01 and 06: computed prose and labels in both languages, on known inputs."""
from vrs_edu.chapters.ch00_orientation.figures import stream_norm_text


def test_ch00_stream_norm_text_in_both_languages():
    assert stream_norm_text(6, 1.0, lang="en") == "final/embedding norm ratio: 1.45 (the default)"
    assert stream_norm_text(6, 1.0, lang="ko") == "최종/임베딩 노름 비율: 1.45 (기본값)"
    assert stream_norm_text(6, 1.25, lang="en") == "final/embedding norm ratio: 1.65 (+0.20 from the default 1.45)"
    assert stream_norm_text(6, 1.25, lang="ko") == "최종/임베딩 노름 비율: 1.65 (기본값 1.45에서 +0.20)"
