"""Build the Fenwold gazetteer (documents.jsonl, questions.jsonl) from the fact base in facts.py.

Why a generator: 44 documents and 260 questions written by hand would drift apart (a year
changed in one place and not in another, a gold passage that is no longer in its document).
Here each document is rendered from facts with hand-written phrasings (several per kind of
sentence, chosen by the document's position so neighbouring entries read differently), and
every question's gold contexts are sentences taken from the rendered text, so they are
verbatim by construction. The output is deterministic: ``python data/fenwold_gazetteer/build.py``
rewrites the two files byte for byte (tests/test_fenwold_gazetteer.py checks it).

Run from the repository root with it on PYTHONPATH (sentence ids use rag_lab's sentence splitter).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import facts as F  # noqa: E402  (the fact base beside this file)

WRITTEN_BY = "rag_lab project (fictional; rendered from data/fenwold_gazetteer/facts.py by build.py)"
ORDINALS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


@dataclass
class Doc:
    id: str
    title: str
    kind: str
    sections: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)   # (heading, [(fact key, sentence)])
    text: str = ""
    spans: list[dict] = field(default_factory=list)
    facts: dict[str, tuple[str, str]] = field(default_factory=dict)                    # key -> (sentence, section id)

    def add(self, heading: str, *sentences: tuple[str, str]) -> None:
        self.sections.append((heading, [s for s in sentences if s[1]]))

    def render(self) -> None:
        """Title, then each heading and its paragraph, separated by blank lines; sections span heading to paragraph end."""
        parts, pos = [self.title], len(self.title)
        for i, (heading, sentences) in enumerate(self.sections, 1):
            start = pos + 2
            para = " ".join(s for _, s in sentences)
            block = f"{heading}\n\n{para}"
            parts.append(block)
            pos = start + len(block)
            sid = f"{self.id}:s{i}"
            self.spans.append({"id": sid, "title": heading, "kind": "section", "start": start, "end": pos, "level": 1})
            for key, s in sentences:
                if key in self.facts:
                    raise ValueError(f"{self.id}: fact key {key!r} used twice")
                self.facts[key] = (s, sid)
        self.text = "\n\n".join(parts)


def pick(options: list[str], i: int) -> str:
    return options[i % len(options)]


def by_id(records):
    return {r["id"]: r for r in records}


TOWN, RIVER, COMPANY, PERSON, INST, EVENT = (by_id(F.TOWNS), by_id(F.RIVERS), by_id(F.COMPANIES), by_id(F.PEOPLE),
                                              by_id(F.INSTITUTIONS), by_id(F.EVENTS))


def name_of(ref: str) -> str:
    """The name of a record (a company called "... Company" takes "the"), or ``ref`` itself when it is a description."""
    for table in (TOWN, RIVER, COMPANY, PERSON, INST, EVENT):
        if ref in table:
            return ("the " if table is COMPANY and table[ref]["name"].endswith("Company") else "") + table[ref]["name"]
    return ref   # a description such as "a group of Mardle merchants"


def cap(text: str) -> str:
    return text[0].upper() + text[1:]


def listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def century(year: int) -> str:
    n = (year - 1) // 100 + 1
    return {10: "tenth", 11: "eleventh", 12: "twelfth", 13: "thirteenth", 14: "fourteenth", 15: "fifteenth",
            16: "sixteenth", 17: "seventeenth", 18: "eighteenth", 19: "nineteenth", 20: "twentieth"}[n] + " century"


# -- documents ---------------------------------------------------------------------------------------
def town_doc(t: dict, i: int) -> Doc:
    river = RIVER[t["river"]]
    d = Doc(t["id"], t["name"], "town")
    founded = pick([f"{t['name']} grew up around {t['origin']} in {t['founded']}, and it received its market charter in {t['charter']}.",
                    f"The first record of {t['name']} dates from {t['founded']}, when it was no more than {t['origin']}; a charter followed in {t['charter']}.",
                    f"Settlement at {t['name']} began in {t['founded']} with {t['origin']}, and the place was made a chartered town in {t['charter']}."], i)
    d.add("History", ("founded", founded), ("past", t["past"]))
    where = pick([f"The town lies on the {t['bank']} bank of the {river['name']}.",
                  f"Its streets run along the {t['bank']} side of the {river['name']}.",
                  f"{t['name']} is built on the {t['bank']} shore of the {river['name']}."], i + 1)
    pop = pick([f"The census of 2021 counted {t['pop']:,} residents.",
                f"About {t['pop']:,} people lived there at the last census.",
                f"Its population was {t['pop']:,} in 2021."], i + 2)
    order = river["towns"]
    k = order.index(t["id"])
    up, down = (TOWN[order[k - 1]]["name"] if k else None), (TOWN[order[k + 1]]["name"] if k + 1 < len(order) else None)
    if up and down:
        along = pick([f"Upstream the nearest town is {up}, and downstream it is {down}.",
                      f"It lies between {up} upstream and {down} further down the {river['short']}."], i)
    elif up or down:
        along = (f"The only other town on the {river['short']} near it is {up or down}, "
                 f"{'upstream' if up else 'downstream'}.")
    else:
        along = f"No other town stands on the {river['short']}."
    d.add(pick(["Geography", "Setting", "Geography"], i), ("river", where), ("terrain", t["terrain"]), ("along", along), ("pop", pop))
    company = COMPANY[t["employer"]]
    industry = pick([f"{t['industry'].capitalize()} have kept the town busy since {t['since']}." if " and " in t["industry"] else
                     f"{t['industry'].capitalize()} has kept the town busy since {t['since']}.",
                     f"The living of the town has come from {t['industry']} since {t['since']}.",
                     f"Since {t['since']} the local economy has rested on {t['industry']}."], i + 2)
    employer = pick([f"The largest employer is {name_of(company['id'])}, which {t['employer_role']}.",
                     f"Most jobs are with {name_of(company['id'])}, which {t['employer_role']}.",
                     f"{cap(name_of(company['id']))} {t['employer_role']}, and it employs more people here than anyone else."], i)
    others = [c for c in F.COMPANIES if t["id"] in c["towns"] and c["id"] != t["employer"]]
    also = [("also", pick([f"{cap(listing([name_of(c['id']) for c in others]))} also {'has' if len(others) == 1 else 'have'} works or offices here.",
                           f"Smaller workplaces belong to {listing([name_of(c['id']) for c in others])}."], i))] if others else []
    d.add(pick(["Economy", "Economy", "Trade and industry"], i + 1), ("industry", industry), ("employer", employer), *also)
    if t["id"] in F.STATIONS:
        line, opened = F.STATIONS[t["id"]]
        rail = pick([f"Its station on the {line} of the Fenwold Railway opened in {opened}.",
                     f"Trains of the Fenwold Railway have called here since {opened}, on the {line}."], i)
    else:
        hub = TOWN[F.NEAREST_STATION[t["id"]]]["name"]
        rail = pick([f"It has no station of its own; travellers take the bus to {hub} for the train.",
                     f"The railway never reached it, and the nearest trains leave from {hub}."], i)
    road = pick([f"A country road follows the {river['short']} through the town.",
                 f"The old drove road still enters it from the {'south' if t['bank'] in ('north', 'east') else 'north'}.",
                 f"Its streets meet at a market place where the buses stop."], i + 1)
    d.add("Transport", ("rail", rail), ("road", road))
    landmark = pick([f"{t['landmark'][0].upper() + t['landmark'][1:]}, {t['landmark_desc']}, dates from {t['landmark_year']}.",
                     f"The best-known sight is {t['landmark']}, {t['landmark_desc']}, built in {t['landmark_year']}.",
                     f"In {t['landmark_year']} the town gained {t['landmark']}, {t['landmark_desc']}."], i + 1)
    second = pick([f"Visitors also seek out {t['second']}.", f"Also worth seeing is {t['second']}.",
                   f"Walkers often end their visit at {t['second']}."], i)
    d.add("Landmarks", ("landmark", landmark), ("second", second))
    festival = pick([f"Every {t['month']} the town holds its {t['festival']}, {t['festival_desc']}.",
                     f"The {t['festival']} takes place each {t['month']}, {t['festival_desc']}.",
                     f"In {t['month']} comes the {t['festival']}, {t['festival_desc']}."], i + 2)
    culture = [("festival", festival)]
    if t["native"]:
        p = PERSON[t["native"]]
        culture.append(("native", pick([f"The {p['role']} {p['name']} was born here in {p['birth']}.",
                                        f"{p['name']}, the {p['role']}, was a native of the town, born in {p['birth']}."], i)))
    if t["institution"]:
        inst = INST[t["institution"]]
        culture.append(("institution", pick([f"The town is home to the {inst['name']}, founded in {inst['founded']}.",
                                             f"Since {inst['founded']} the {inst['name']} has been one of its institutions."], i + 1)))
    d.add(pick(["Culture", "Customs and people", "Culture and people"], i), *culture)
    return d


def river_doc(r: dict, i: int) -> Doc:
    d = Doc(r["id"], r["name"], "river")
    is_lake = r["id"].startswith("lake-")
    if is_lake:
        course = f"{r['name']} is about {r['length']} miles long and is fed by {r['source']}."
        mouth = f"It drains through {r['mouth']}."
    else:
        course = pick([f"The {r['short']} rises at {r['source']} and runs {r['length']} miles to {r['mouth']}.",
                       f"From its source at {r['source']} the {r['short']} flows for {r['length']} miles.",
                       f"The {r['short']} is {r['length']} miles long, rising at {r['source']}."], i)
        mouth = "" if i % 3 == 0 else f"It ends its course at {r['mouth']}."
    d.add("Course", ("course", course), ("mouth", mouth))
    towns = [TOWN[t]["name"] for t in r["towns"]]
    on = (f"The only town on its shore is {towns[0]}." if len(towns) == 1 else
          pick([f"Going downstream, it passes {listing(towns)}.", f"The towns along it, from the top, are {listing(towns)}.",
                f"{listing(towns)} stand on its banks, in that order downstream."], i + 1))
    d.add(pick(["Towns", "Settlements", "Places on its banks"], i), ("towns", on))
    if r["tributaries"]:
        tribs = [RIVER[x]["name"] for x in r["tributaries"]]
        trib = f"Its main {'feeder is' if len(tribs) == 1 else 'tributaries are'} {listing(tribs)}."
    else:
        trib = pick(["It has no tributary of any size, only field drains and small becks.",
                     "No river of note joins it; it is fed by springs and short streams."], i)
    d.add("Tributaries", ("tributaries", trib))
    d.add("History", ("history", r["history"]), ("bridge", r["bridge"]))
    d.add(pick(["Ecology", "Wildlife", "Nature"], i), ("ecology", r["ecology"]))
    return d


def company_doc(c: dict, i: int) -> Doc:
    d = Doc(c["id"], c["name"], "company")
    the_name = name_of(c["id"])
    founder = name_of(c["founder"])
    hq = TOWN[c["hq"]]["name"]
    founded = pick([f"{cap(the_name)} was founded in {c['founded']} by {founder} together with {c['partner']}.",
                    f"In {c['founded']}, {founder} set up {the_name} with the help of {c['partner']}.",
                    f"{cap(founder)} started {the_name} in {c['founded']}, backed by {c['partner']}."], i)
    origin = ([("founder", pick([f"Its founder, {founder}, was born in {TOWN[PERSON[c['founder']]['born']]['name']} in "
                                 f"{PERSON[c['founder']]['birth']}.",
                                 f"{founder} was a {PERSON[c['founder']]['role']} from {TOWN[PERSON[c['founder']]['born']]['name']}."], i))]
              if c["founder"] in PERSON else [])
    d.add("History", ("founded", founded), ("history", c["history"]), *origin)
    products = pick([f"Its main lines are {listing(c['products'])}.", f"It is known for {listing(c['products'])}.",
                     f"The firm's business is {listing(c['products'])}."], i + 1)
    d.add(pick(["Products", "What it makes", "Business"], i), ("products", products),
          ("product", f"The region still thinks of {c['product']} from {hq} first when it thinks of {the_name}."
           if i % 2 else f"Most of its {c['product']} trade still passes through {hq}."))
    hq_s = pick([f"Its headquarters are in {hq}.", f"The company is run from {hq}.", f"{hq} has been its home since the beginning."], i + 2)
    ops = [("hq", hq_s)]
    if c["towns"]:
        others = [TOWN[t]["name"] for t in c["towns"]]
        ops.append(("towns", pick([f"It also has works or offices in {listing(others)}.", f"Outside its home town it operates in {listing(others)}."], i)))
    ops.append(("staff", pick([f"It employs about {c['staff']:,} people.", f"Its staff numbers around {c['staff']:,}."], i + 1)))
    d.add("Operations", *ops)
    d.add("Today", ("today", c["today"]))
    return d


def person_doc(p: dict, i: int) -> Doc:
    d = Doc(p["id"], p["name"], "person")
    town = TOWN[p["born"]]["name"]
    birth = pick([f"{p['name']} was born in {town} in {p['birth']}.", f"Born in {p['birth']} at {town}, {p['name']} became a {p['role']}.",
                  f"{p['name']} came into the world at {town} in {p['birth']}."], i)
    d.add("Early life", ("birth", birth), ("early", p["early"]))
    d.add("Career", ("work", p["work"]))
    org = name_of(p["founded_org"])
    year = (COMPANY.get(p["founded_org"]) or INST.get(p["founded_org"]))["founded"]
    d.add(pick(["Foundation", "The enterprise", "Founding work"], i),
          ("founded_org", pick([f"In {year} {p['name'].split()[0]} founded the {org}." if p["founded_org"] in INST else
                                f"In {year} {p['name'].split()[0]} founded {org}.",
                                f"The {org} owes its beginning in {year} to this {p['role']}." if p["founded_org"] in INST else
                                f"{org} owes its beginning in {year} to this {p['role']}."], i)))
    death = pick([f"{p['name']} died in {p['death']}.", f"The {p['role']} died in {p['death']}, aged about {p['death'] - p['birth']}."], i + 1)
    d.add("Legacy", ("death", death), ("legacy", p["legacy"]))
    return d


def institution_doc(n: dict, i: int) -> Doc:
    d = Doc(n["id"], n["name"], "institution")
    town = TOWN[n["town"]]["name"]
    founder = name_of(n["founder"])
    founded = pick([f"The {n['name']} was founded in {n['founded']} by {founder}.",
                    f"{cap(founder)} established the {n['name']} in {n['founded']}.",
                    f"The {n['kind']} dates from {n['founded']}, when {founder} opened it."], i)
    d.add("Founding", ("founded", founded), ("town", f"It stands in {town}."))
    org = [("organisation", n["organisation"])]
    if n.get("students"):
        org.append(("students", f"About {n['students']:,} students are enrolled."))
    d.add("Organisation", *org)
    d.add(pick(["Collections", "Holdings", "Collections"], i), ("collections", n["collections"]))
    d.add("Buildings", ("buildings", n["buildings"]))
    return d


def event_doc(e: dict, i: int) -> Doc:
    d = Doc(e["id"], f"{e['name']} of {e['year']}", "event")
    start = TOWN[e["start"]]["name"]
    d.add("Background", ("when", pick([f"The {e['name']} began at {start} in {e['month']} {e['year']}.",
                                       f"In {e['month']} {e['year']} the {e['name']} struck {start} first."], i)),
          ("cause", f"Its cause was {e['cause']}."))
    places = [TOWN[t]["name"] for t in e["places"]]
    d.add(pick(["Course of events", "What happened"], i), ("course", e["course"]),
          ("places", f"The places most affected were {listing(places)}."))
    d.add("Aftermath", ("aftermath", e["aftermath"]))
    d.add("Remembrance", ("remembrance", e["remembrance"]))
    return d


def documents() -> list[Doc]:
    docs = ([town_doc(t, i) for i, t in enumerate(F.TOWNS)] + [river_doc(r, i) for i, r in enumerate(F.RIVERS)]
            + [company_doc(c, i) for i, c in enumerate(F.COMPANIES)] + [person_doc(p, i) for i, p in enumerate(F.PEOPLE)]
            + [institution_doc(n, i) for i, n in enumerate(F.INSTITUTIONS)] + [event_doc(e, i) for i, e in enumerate(F.EVENTS)])
    for d in docs:
        d.render()
    return docs


# -- questions ---------------------------------------------------------------------------------------
class Questions:
    """Collects questions; gold contexts are (document, fact key) pairs looked up in the rendered text."""

    def __init__(self, docs: list[Doc]):
        self.docs = {d.id: d for d in docs}
        self.rows: list[dict] = []
        self.counts: dict[str, int] = {}

    def sentence(self, doc: str, key: str) -> str:
        return self.docs[doc].facts[key][0]

    def add(self, kind: str, question: str, answer: str, gold: list[tuple[str, str]], group: dict | None = None) -> None:
        gold = list(dict.fromkeys(gold))
        missing = [g for g in gold if g[1] not in self.docs[g[0]].facts]
        if missing:
            raise KeyError(f"{kind} question {question!r}: no fact {missing}")
        self.counts[kind] = self.counts.get(kind, 0) + 1
        meta = {"kind": kind, "written_by": WRITTEN_BY}
        if group:
            meta["strategy"] = group["strategy"]
            meta["group"] = group
        self.rows.append({"id": f"fg-{kind.replace('_', '-')}-{self.counts[kind]:02d}", "question": question, "answer": answer,
                          "gold_doc_ids": list(dict.fromkeys(d for d, _ in gold)),
                          "gold_contexts": [self.docs[d].facts[k][0] for d, k in gold],
                          "gold_section_ids": list(dict.fromkeys(self.docs[d].facts[k][1] for d, k in gold)),
                          "meta": meta})

    def group(self, strategy: str, gold: list[tuple[str, str]], **params) -> dict:
        """The group as the SSG questions store it: sentence ids (``<doc>#s<j>``, rag_lab's sentence splitter), the
        3-sentence windows starting at each run of sentences read (``<doc>#w<j>``), and how it was chosen."""
        from rag_lab.core.chunking import sentence_spans

        ids, path = [], []
        for doc_id, key in dict.fromkeys(gold):
            doc = self.docs[doc_id]
            text = self.docs[doc_id].facts[key][0]
            start = doc.text.index(text)
            spans = sentence_spans(doc.text)
            j = [n for n, (s, e) in enumerate(spans) if s < start + len(text) and e > start][0]
            ids.append(f"{doc_id}#s{j}")
            window = f"{doc_id}#w{min(j, max(len(spans) - 3, 0))}"
            if not path or path[-1] != window and not ids[-2:-1] == [f"{doc_id}#s{j - 1}"]:
                path.append(window)
        return {"strategy": strategy, "sentence_ids": ids, "path": path, "params": {"chosen_by": "build.py", **params}}


def single(q: Questions) -> None:
    for i, t in enumerate(F.TOWNS):
        if i % 2 == 0:
            q.add("single", f"In which year was {t['landmark']} in {t['name']} built?", f"In {t['landmark_year']}.",
                  [(t["id"], "landmark")])
        else:
            q.add("single", f"In which month is the {t['festival']} held, and what happens at it?",
                  f"In {t['month']}, {t['festival_desc']}.", [(t["id"], "festival")])
    for c in F.COMPANIES:
        q.add("single", f"How many people work for {name_of(c['id'])}?", f"About {c['staff']:,}.", [(c["id"], "staff")])
    for p in F.PEOPLE:
        q.add("single", f"What did {p['name']} achieve as a {p['role']}?", p["work"], [(p["id"], "work")])
    for n in F.INSTITUTIONS:
        q.add("single", f"What is kept in the collections of the {n['name']}?", n["collections"], [(n["id"], "collections")])
    for r in F.RIVERS:
        q.add("single", f"What wildlife is the {r['name']} known for?", r["ecology"], [(r["id"], "ecology")])


def multi_passage(q: Questions) -> None:
    for i, t in enumerate(F.TOWNS):
        q.add("multi_passage", f"How did {t['name']} begin, and what has its economy depended on?",
              f"It began with {t['origin']} in {t['founded']}; its economy has rested on {t['industry']} since {t['since']}.",
              [(t["id"], "founded"), (t["id"], "industry")])
    for c in F.COMPANIES:
        q.add("multi_passage", f"Who founded {name_of(c['id'])}, and what does it do today?",
              f"{name_of(c['founder'])} founded it in {c['founded']}; {c['today'][0].lower() + c['today'][1:]}",
              [(c["id"], "founded"), (c["id"], "today")])
    for p in F.PEOPLE:
        q.add("multi_passage", f"Where was {p['name']} born, and how is {p['name'].split()[0]} remembered?",
              f"In {TOWN[p['born']]['name']} in {p['birth']}. {p['legacy']}", [(p["id"], "birth"), (p["id"], "legacy")])
    for n in F.INSTITUTIONS:
        q.add("multi_passage", f"Who founded the {n['name']}, and in what building is it housed?",
              f"{name_of(n['founder'])} in {n['founded']}. {n['buildings']}", [(n["id"], "founded"), (n["id"], "buildings")])
    for r in F.RIVERS:
        q.add("multi_passage", f"Where does the {r['name']} begin, and what happened on it in the past?",
              f"At {r['source']}. {r['history']}", [(r["id"], "course"), (r["id"], "history")])


def multi_hop(q: Questions) -> None:
    for c in F.COMPANIES:
        t = TOWN[c["hq"]]
        q.add("multi_hop", f"On which river or lake stands the town where {name_of(c['id'])} has its headquarters?",
              f"{t['name']}, on the {RIVER[t['river']]['name']}.", [(c["id"], "hq"), (t["id"], "river")])
    for p in F.PEOPLE:
        t = TOWN[p["born"]]
        q.add("multi_hop", f"Which festival does the birthplace of {p['name']} hold, and in which month?",
              f"{t['name']} holds the {t['festival']} in {t['month']}.", [(p["id"], "birth"), (t["id"], "festival")])
    for n in F.INSTITUTIONS:
        t = TOWN[n["town"]]
        q.add("multi_hop", f"When did the town that is home to the {n['name']} receive its charter?",
              f"{t['name']} was chartered in {t['charter']}.", [(n["id"], "town"), (t["id"], "founded")])
    for t in F.TOWNS:
        c = COMPANY[t["employer"]]
        q.add("multi_hop", f"In which year was the largest employer of {t['name']} founded?",
              f"{name_of(c['id'])}, founded in {c['founded']}.", [(t["id"], "employer"), (c["id"], "founded")])
    for e in F.EVENTS:
        t = TOWN[e["start"]]
        q.add("multi_hop", f"What is the best-known landmark of the town where the {e['name']} of {e['year']} began?",
              f"{t['name']}: {t['landmark']}, from {t['landmark_year']}.", [(e["id"], "when"), (t["id"], "landmark")])


def entity(q: Questions) -> None:
    for c in F.COMPANIES:
        towns = [t["id"] for t in F.TOWNS if t["employer"] == c["id"]]
        gold = [(c["id"], "hq")] + ([(c["id"], "towns")] if c["towns"] else []) + [(t, "employer") for t in towns]
        others = [TOWN[t]["name"] for t in c["towns"] if t not in towns]
        q.add("entity", f"Where does {name_of(c['id'])} operate, and what does it do in each place?",
              f"It is run from {TOWN[c['hq']]['name']}. " + "; ".join(f"{TOWN[t]['name']}: it {TOWN[t]['employer_role']}" for t in towns)
              + (f"; it also has works or offices in {listing(others)}." if others else "."), gold)
    for r in F.RIVERS:
        gold = [(r["id"], "towns")] + [(t, "river") for t in r["towns"]]
        q.add("entity", f"Which towns lie on the {r['name']}, and on which side of it?",
              "; ".join(f"{TOWN[t]['name']} ({TOWN[t]['bank']})" for t in r["towns"]) + ".", gold)
    for p in F.PEOPLE:
        org = p["founded_org"]
        town_of_org = (COMPANY.get(org) or {}).get("hq") or (INST.get(org) or {}).get("town")
        gold = [(p["born"], "native"), (p["id"], "founded_org"), (org, "founded")]
        q.add("entity", f"Which places and organisations does the gazetteer connect with {p['name']}?",
              f"Born in {TOWN[p['born']]['name']}; founded {name_of(org)} in {TOWN[town_of_org]['name']}.", gold)
    for n in F.INSTITUTIONS:
        gold = [(n["id"], "founded"), (n["town"], "institution")] if TOWN[n["town"]]["institution"] == n["id"] else [(n["id"], "founded")]
        gold += [(d, k) for d, doc in {x["id"]: x for x in F.PEOPLE}.items() for k in ("work", "legacy")
                 if n["name"].split(" ", 1)[-1].split()[0] in doc[k] and n["kind"] in doc[k].lower()]
        q.add("entity", f"What does the gazetteer record about the {n['name']} and who started it?",
              f"Founded in {n['founded']} by {name_of(n['founder'])}, in {TOWN[n['town']]['name']}. {n['organisation']}",
              gold + [(n["id"], "organisation")])
    for e in F.EVENTS:
        gold = [(e["id"], "places")] + [(t, "past") for t in e["places"]]
        q.add("entity", f"Which towns were touched by the {e['name']} of {e['year']}, and how?",
              " ".join(f"{TOWN[t]['name']}: {TOWN[t]['past']}" for t in e["places"]), gold)


def theme_group(q: Questions) -> None:
    def ask(question: str, answer: str, gold: list, theme: str):
        q.add("theme_group", question, answer, gold, q.group("theme_based", gold, theme=theme))

    slots = [("festival", "Which festivals do the towns on the {r} hold, and when?",
              lambda t: f"{t['name']}: {t['festival']} in {t['month']}"),
             ("industry", "What have the towns on the {r} lived from?", lambda t: f"{t['name']}: {t['industry']}"),
             ("landmark", "Which landmarks do the towns on the {r} have, and how old are they?",
              lambda t: f"{t['name']}: {t['landmark']} ({t['landmark_year']})"),
             ("founded", "How and when did the towns on the {r} begin?", lambda t: f"{t['name']}: {t['origin']}, {t['founded']}"),
             ("past", "What misfortunes or changes in their past does the gazetteer record for the towns on the {r}?",
              lambda t: f"{t['name']}: {t['past']}")]
    for r in F.RIVERS:
        towns = [TOWN[t] for t in r["towns"]]
        chunks = [towns[:3], towns[3:]] if len(towns) > 4 else [towns]
        for part, members in enumerate(chunks):
            if len(members) < 2:
                continue
            where = r["name"] if len(chunks) == 1 else f"{'upper' if part == 0 else 'lower'} {r['name']} ({listing([m['name'] for m in members])})"
            for key, question, say in slots:
                ask(question.format(r=where), "; ".join(say(t) for t in members) + ".", [(t["id"], key) for t in members],
                    f"{key} of the towns on the {where}")
    seasons = {"spring": ("March", "April", "May"), "summer": ("June", "July", "August"), "autumn": ("September", "October", "November"),
               "winter": ("December", "January", "February")}
    for season, months in seasons.items():
        members = [t for t in F.TOWNS if t["month"] in months]
        if len(members) >= 2:
            ask(f"Which towns of Fenwold hold a festival in {season}, and what is it?",
                "; ".join(f"{t['name']}: {t['festival']} ({t['month']})" for t in members) + ".",
                [(t["id"], "festival") for t in members], f"festivals in {season}")
    for label, pred in [("before 1800", lambda c: c["founded"] < 1800), ("in the nineteenth century", lambda c: c["founded"] >= 1800)]:
        members = [c for c in F.COMPANIES if pred(c)]
        ask(f"Which Fenwold companies were founded {label}, and by whom?",
            "; ".join(f"{c['name']}: {name_of(c['founder'])}, {c['founded']}" for c in members) + ".",
            [(c["id"], "founded") for c in members], f"companies founded {label}")
    ask("How do the founders of Fenwold's institutions compare: which were started by a single person?",
        "; ".join(f"{n['name']}: {name_of(n['founder'])}" for n in F.INSTITUTIONS) + ".",
        [(n["id"], "founded") for n in F.INSTITUTIONS], "founders of institutions")
    ask("What did each of the region's notable people do in their career?",
        "; ".join(f"{p['name']}: {p['work']}" for p in F.PEOPLE), [(p["id"], "work") for p in F.PEOPLE], "careers of people")
    ask("How is each of Fenwold's notable people remembered?", " ".join(p["legacy"] for p in F.PEOPLE),
        [(p["id"], "legacy") for p in F.PEOPLE], "legacies of people")
    ask("What caused each of the disasters and upheavals recorded in the gazetteer?",
        "; ".join(f"{e['name']} ({e['year']}): {e['cause']}" for e in F.EVENTS) + ".", [(e["id"], "cause") for e in F.EVENTS],
        "causes of events")
    ask("How long are the rivers of Fenwold, and where do they rise?",
        "; ".join(f"{r['name']}: {r['length']} miles from {r['source']}" for r in F.RIVERS if r["id"].startswith("river-")) + ".",
        [(r["id"], "course") for r in F.RIVERS if r["id"].startswith("river-")], "courses of rivers")
    ask("What do Fenwold's companies do today?", " ".join(c["today"] for c in F.COMPANIES), [(c["id"], "today") for c in F.COMPANIES],
        "companies today")


def sequential_group(q: Questions) -> None:
    """Readings of two consecutive sentences, joined by hops along a name the reading mentions."""
    def ask(question: str, answer: str, gold: list, hops: list[str]):
        q.add("sequential_group", question, answer, gold, q.group("sequential_multi_hop", gold, hops=hops))

    for c in F.COMPANIES:
        if c["founder"] not in PERSON:
            continue
        p = PERSON[c["founder"]]
        t = TOWN[p["born"]]
        ask(f"Trace {name_of(c['id'])} back to its founder: how did the firm begin, who was the founder and what was the founder's home town like in its early days?",
            f"{c['history']} It was founded by {p['name']}, born in {t['name']} in {p['birth']}; {p['early']} {t['name']} began as {t['origin']} ({t['founded']}). {t['past']}",
            [(c["id"], "founded"), (c["id"], "history"), (p["id"], "birth"), (p["id"], "early"), (t["id"], "founded"), (t["id"], "past")],
            [c["id"], p["id"], t["id"]])
    for t in F.TOWNS:
        c = COMPANY[t["employer"]]
        ask(f"Starting from the economy of {t['name']}, follow its largest employer: what does the firm do there, how did it start, and what does it make?",
            f"{t['name']} lives from {t['industry']}; {name_of(c['id'])} {t['employer_role']}. It was founded in {c['founded']} by {name_of(c['founder'])}. {c['history']} Its main lines are {listing(c['products'])}.",
            [(t["id"], "industry"), (t["id"], "employer"), (c["id"], "founded"), (c["id"], "history"), (c["id"], "products")],
            [t["id"], c["id"]])
    for r in F.RIVERS:
        for t_id in r["towns"][:2] if len(r["towns"]) > 2 else r["towns"][:1]:
            t = TOWN[t_id]
            c = COMPANY[t["employer"]]
            ask(f"Follow the {r['name']} to {t['name']}: what is the river's course, where does {t['name']} lie on it, and what does {name_of(c['id'])} do today?",
                f"{r['name']}: {r['length']} miles from {r['source']}. {t['name']} lies on its {t['bank']} bank. {c['today']}",
                [(r["id"], "course"), (r["id"], "towns"), (t["id"], "river"), (t["id"], "terrain"), (c["id"], "today")], [r["id"], t["id"], c["id"]])
    for e in F.EVENTS:
        t = TOWN[e["start"]]
        ask(f"Read the {e['name']} of {e['year']} from its cause to its aftermath, then turn to the town where it began: what came of it there?",
            f"{e['cause'][0].upper() + e['cause'][1:]}. {e['course']} {e['aftermath']} In {t['name']}: {t['past']}",
            [(e["id"], "when"), (e["id"], "cause"), (e["id"], "course"), (e["id"], "aftermath"), (t["id"], "founded"), (t["id"], "past")],
            [e["id"], t["id"]])


def section(q: Questions) -> None:
    """One question per document on one of its sections: the first of the kind's preferred headings with two
    or more sentences (else the preferred section with the most), its gold every sentence of that section."""
    wanted = {"town": ("Landmarks", "History"), "river": ("History", "Course"), "company": ("Operations", "History"),
              "person": ("Legacy", "Early life"), "institution": ("Founding", "Organisation"), "event": ("Background", "Course of events")}
    for d in q.docs.values():
        options = [(h, s) for h, s in d.sections if h in wanted[d.kind]]
        heading, sentences = next(((h, s) for h, s in options if len(s) >= 2), max(options, key=lambda o: len(o[1])))
        q.add("section", f"What does the {heading} section of the entry on {d.title} say?", " ".join(s for _, s in sentences),
              [(d.id, key) for key, _ in sentences])


KINDS = ("single", "multi_passage", "multi_hop", "entity", "theme_group", "sequential_group", "section")


def build() -> tuple[list[dict], list[dict]]:
    docs = documents()
    q = Questions(docs)
    for make in (single, multi_passage, multi_hop, entity, theme_group, sequential_group, section):
        make(q)
    rows = [{"id": d.id, "title": d.title, "text": d.text, "sections": d.spans, "meta": {"kind": d.kind, "written_by": WRITTEN_BY}}
            for d in docs]
    return rows, q.rows


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write(folder: Path = HERE) -> None:
    """Write both files atomically (a temporary file renamed into place)."""
    from rag_lab.caching.atomic import write_text

    documents_rows, question_rows = build()
    write_text(folder / "documents.jsonl", jsonl(documents_rows))
    write_text(folder / "questions.jsonl", jsonl(question_rows))


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
