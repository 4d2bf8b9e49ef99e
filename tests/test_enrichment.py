"""Embedding selected rows from the table UI, through datasette-enrichments' own endpoints."""

import re

from datasette_enrichments.utils import wait_for_job

from archivist.queries.runner import Archive


async def test_the_enrichment_embeds_the_selected_documents(sample_workspace, sample_datasette):
    datasette = sample_datasette
    cookies = {"ds_actor": datasette.sign({"a": {"id": "root"}}, "actor")}
    picker = await datasette.client.get("/-/enrich/archive/documents?kind=conversation", cookies=cookies)
    assert "Embed for semantic search" in picker.text
    url = "/-/enrich/archive/documents/archivist-embed?kind=conversation"
    form = await datasette.client.get(url, cookies=cookies)
    assert form.status_code == 200 and "13 rows" in form.text
    cookies["ds_csrftoken"] = form.cookies["ds_csrftoken"]
    started = await datasette.client.post(url, data={"csrftoken": cookies["ds_csrftoken"]}, cookies=cookies)
    assert started.status_code == 302
    job_id = re.search(r"_enrichment_job=(\d+)", started.headers["location"])[1]
    await wait_for_job(datasette, job_id, "archive", timeout=120)
    progress = await datasette.client.get(f"/-/enrichment-jobs/archive/{job_id}", cookies=cookies)
    assert progress.status_code == 200  # the enrichment's own progress display
    job = await datasette.client.get(f"/archive/_enrichment_jobs.json?id={job_id}&_shape=array", cookies=cookies)
    assert (job.json()[0]["status"], job.json()[0]["done_count"], job.json()[0]["error_count"]) == ("finished", 13, 0)
    with Archive.for_workspace(sample_workspace) as archive:
        (status,) = archive.run("embedding_status")
        embedded = {row["id"] for row in archive.run("search_semantic", {"query": "kubernetes", "limit": 100})}
        kinds = {archive.run("find_document", {"document": str(i)})[0]["kind"] for i in embedded}
    assert (status["num_documents"], status["pending"]) == (13, 55 - 13)
    assert kinds == {"conversation"}
