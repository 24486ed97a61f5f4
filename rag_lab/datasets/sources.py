"""The named download sources: official URLs, licences, and how each file is checked.

Every source names a data set a loader reads (``load_dataset(NAME)`` after ``download NAME``).
A file is checked in one of three ways:

- **pinned**: a SHA-256 published by the host (Hugging Face shows the Git LFS object id of
  each large file); a download that differs is refused. ``sha256_from`` says where it was read.
- **first use**: no authoritative checksum exists (GitHub raw files, S3 tarballs), so the
  first download's SHA-256 is recorded in ``<data root>/checksums.json`` and printed, and
  every later download of that URL must match it.
- **changes**: the host replaces the file in place (MeSH is regenerated nightly), so the
  SHA-256 is recorded for provenance but not enforced.

API sources (``pmc_oa``, ``wikipedia``) fetch many small responses; they are rate-limited
and every saved response is recorded in a manifest instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field

HF_RAGBENCH = "https://huggingface.co/datasets/galileo-ai/ragbench"
# The last upload commit of the RAGBench files (June 2024); pinning it keeps the files fixed.
RAGBENCH_REVISION = "97808f3e5fd16ede40bbff6c2949af8139b2eb7b"
RAGBENCH_PINNED = {
    # Git LFS object ids shown on the files' Hugging Face pages (covidqa: upload fe5ba43; techqa: upload 47edf0d;
    # emanual: upload 30a26ef, the last change to its three files).
    ("covidqa", "test"): "25bc50f064a0b1de82d97eef2b7d7a71b5e2364522f3622ba947a61763f94174",
    ("techqa", "test"): "426f360d12b5d3589b66293c3417d3686a9d69eba3e82938e93d3e1545681264",
    ("emanual", "test"): "dac740610087111a492e6ca639b7d2fe210d4793a743cd0e9c80885de48fab5e",
    ("emanual", "validation"): "db64e0298c37824ef95ef5007428c5731c279ac9227c0bda452aef2e70d3fbf1",
    ("emanual", "train"): "f945c9008b8e98afe7bee29b84f1ee804fe33c1cd1c76e7fbd5293351cbddb67",
}
# GitHub files are read at a fixed commit, never at a branch head that can move: each commit below holds
# the file (seen in the repository at that commit).
GITHUB_COMMITS = {
    "pubmedqa/pubmedqa": "1f00b98d5cc626844bf8c4ca513b6e62c40071ec",
    "google-deepmind/narrativeqa": "904246f6d1fe99a99a08a03501fe3e619af2cee5",
    "deepset-ai/COVID-QA": "d1b1b396f2d14107245c705fa5c32a493139bcae",
    "nyu-mll/quality": "2283788bbf9d804ba5eebd4789632fab41370bd0",
}
MESH_YEAR = "2026"
PMC_OA_SERVICE = "https://www.ncbi.nlm.nih.gov/pmc/utils/oa/oa.fcgi"
EFETCH = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi"
MEDIAWIKI_API = "https://en.wikipedia.org/w/api.php"


@dataclass(frozen=True)
class RemoteFile:
    url: str                          # may hold {param} fields filled from the source's params
    name: str                         # the file's name inside the data set's folder
    sha256: str | None = None         # pinned checksum, or None: recorded on first use
    sha256_from: str = ""             # where the pinned value was read
    changes: bool = False             # replaced upstream in place: checksum recorded, not enforced
    splits: tuple[str, ...] = ()      # the splits it holds; () = fetched whatever the splits asked
    members: tuple[str, ...] = ()     # archive members (matched by base name) unpacked beside it

    @property
    def check(self) -> str:
        return "pinned" if self.sha256 else ("recorded, not enforced (changes upstream)" if self.changes
                                             else "recorded on first use")


@dataclass(frozen=True)
class Source:
    name: str                         # the loader name, and the folder under the data root
    title: str
    licence: str
    homepage: str
    files: tuple[RemoteFile, ...] = ()
    splits: tuple[str, ...] = ()
    default_splits: tuple[str, ...] = ()
    params: dict[str, str] = field(default_factory=dict)   # defaults of {param} fields in URLs
    api: str = ""                     # "pmc_oa" / "wikipedia": fetched through an API
    note: str = ""
    folder: str = ""                  # folder under the data root, when not the name
    usage: str = ""                   # how to load it, when not load_dataset(name)

    @property
    def dir_name(self) -> str:
        return self.folder or self.name

    @property
    def how_to_load(self) -> str:
        return self.usage or f"load_dataset({self.name!r})"

    def urls(self) -> list[str]:
        if self.api == "pmc_oa":
            return [PMC_OA_SERVICE, EFETCH]
        if self.api == "wikipedia":
            return [MEDIAWIKI_API]
        return [f.url.format(**self.params) for f in self.files]


def _ragbench(subset: str, title: str) -> Source:
    files = tuple(
        RemoteFile(f"{HF_RAGBENCH}/resolve/{RAGBENCH_REVISION}/{subset}/{split}-00000-of-00001.parquet",
                   f"{subset}/{split}-00000-of-00001.parquet", sha256=RAGBENCH_PINNED.get((subset, split)),
                   sha256_from=f"{HF_RAGBENCH}/blob/main/{subset}/{split}-00000-of-00001.parquet (Git LFS SHA256)"
                   if (subset, split) in RAGBENCH_PINNED else "", splits=(split,))
        for split in ("test", "validation", "train"))
    return Source(f"ragbench_{subset}", f"RAGBench {title} (Friel et al. 2024), Hugging Face galileo-ai/ragbench",
                  "CC BY 4.0", f"{HF_RAGBENCH}/tree/main/{subset}", files, ("test", "validation", "train"), ("test",),
                  note=f"revision {RAGBENCH_REVISION[:7]} pinned in the URL", folder="ragbench")


_GITHUB_RAW = "https://raw.githubusercontent.com"


def _raw(repo: str, path: str) -> str:
    """A file of a GitHub repository at its pinned commit."""
    return f"{_GITHUB_RAW}/{repo}/{GITHUB_COMMITS[repo]}/{path}"

_QASPER = "https://qasper-dataset.s3.us-west-2.amazonaws.com"

SOURCES: dict[str, Source] = {s.name: s for s in [
    Source("pubmedqa", "PubMedQA PQA-L, 1,000 expert-labelled questions (Jin et al. 2019)", "MIT",
           "https://github.com/pubmedqa/pubmedqa",
           (RemoteFile(_raw("pubmedqa/pubmedqa", "data/ori_pqal.json"), "ori_pqal.json"),)),
    Source("qasper", "QASPER v0.3, questions on NLP papers (Dasigi et al. 2021)", "CC BY 4.0",
           "https://allenai.org/data/qasper",
           (RemoteFile(f"{_QASPER}/qasper-train-dev-v0.3.tgz", "qasper-train-dev-v0.3.tgz", splits=("train", "dev"),
                       members=("qasper-train-v0.3.json", "qasper-dev-v0.3.json")),
            RemoteFile(f"{_QASPER}/qasper-test-and-evaluator-v0.3.tgz", "qasper-test-and-evaluator-v0.3.tgz",
                       splits=("test",), members=("qasper-test-v0.3.json",))),
           ("train", "dev", "test"), ("train", "dev", "test")),
    Source("quality", "QuALITY v1.0.1, multiple-choice questions on long articles (Pang et al. 2022)",
           "CC BY 4.0 (article texts: see each line's license field)", "https://github.com/nyu-mll/quality",
           (RemoteFile(f"https://github.com/nyu-mll/quality/raw/{GITHUB_COMMITS['nyu-mll/quality']}/data/v1.0.1/"
                       "QuALITY.v1.0.1.zip",
                       "QuALITY.v1.0.1.zip", members=tuple(f"QuALITY.v1.0.1.htmlstripped.{s}"
                                                           for s in ("train", "dev", "test"))),)),
    Source("narrativeqa", "NarrativeQA questions and Wikipedia summaries (Kočiský et al. 2018)",
           "Apache 2.0 (summaries: CC BY-SA, from Wikipedia)", "https://github.com/google-deepmind/narrativeqa",
           tuple(RemoteFile(_raw("google-deepmind/narrativeqa", p), p)
                 for p in ("documents.csv", "qaps.csv", "third_party/wikipedia/summaries.csv")),
           note="--stories SPLIT also fetches that split's full stories from the URLs in documents.csv (Project "
                "Gutenberg and script sites), as the repository's download_stories.sh does"),
    _ragbench("covidqa", "COVID-QA"),
    _ragbench("emanual", "eManual"),
    _ragbench("techqa", "TechQA"),
    Source("covidqa", "COVID-QA, SQuAD-format questions on CORD-19 articles (Möller et al. 2020)", "Apache 2.0",
           "https://github.com/deepset-ai/COVID-QA",
           (RemoteFile(_raw("deepset-ai/COVID-QA", "data/question-answering/COVID-QA.json"), "COVID-QA.json"),)),
    Source("squad", "SQuAD v2.0 (Rajpurkar et al. 2018)", "CC BY-SA 4.0", "https://rajpurkar.github.io/SQuAD-explorer/",
           tuple(RemoteFile(f"https://rajpurkar.github.io/SQuAD-explorer/dataset/{s}-v2.0.json", f"{s}-v2.0.json",
                            splits=(s,)) for s in ("dev", "train")), ("dev", "train"), ("dev",)),
    Source("mesh", "MeSH descriptors, XML (U.S. National Library of Medicine)",
           "NLM terms and conditions (free of charge; attribute NLM)",
           "https://www.nlm.nih.gov/databases/download/mesh.html",
           (RemoteFile("https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/desc{year}.xml", "desc{year}.xml",
                       changes=True),),
           params={"year": MESH_YEAR}, note="--year picks the vocabulary year; NLM regenerates the file on weekdays",
           usage="rag_lab.datasets.vocabulary.load_mesh_descriptors()"),
    Source("pmc_oa", "PubMed Central Open Access articles, JATS XML, by PMCID (--ids)",
           "per article (recorded in manifest.json; the OA subset is CC or similarly licensed)",
           "https://pmc.ncbi.nlm.nih.gov/tools/openftlist/", api="pmc_oa",
           note="OA web service checks each id is in the Open Access subset; E-utilities efetch returns its JATS; "
                "<= 3 requests/s (10 with NCBI_API_KEY)"),
    Source("wikipedia", "Wikipedia pages of the SSG corpus through the MediaWiki API (topics 'Machine learning' "
           "and 'Artificial intelligence', 5 articles each)", "CC BY-SA 4.0", "https://en.wikipedia.org/w/api.php",
           api="wikipedia", note="--topics / --articles-per-topic change the corpus; 1 request/s"),
]}


GROUPS = {"ragbench": ("ragbench_covidqa", "ragbench_emanual", "ragbench_techqa")}


def get_sources(name: str) -> list[Source]:
    """The source called ``name``, or the sources of a group (``ragbench``: its three subsets)."""
    if name in GROUPS:
        return [SOURCES[n] for n in GROUPS[name]]
    if name not in SOURCES:
        raise ValueError(f"no download source named {name!r}; known: {', '.join([*SOURCES, *GROUPS])}")
    return [SOURCES[name]]
