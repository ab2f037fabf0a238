"""The general vocabulary `search` reads queries with: stop words, phrases, verbs by operation, noun synonyms; and the
verbs tool names are made with, which grouping reads them by too.

Plain tables of everyday software and office words, written from no particular server: one row per entry,
`word: expansion words`, rows separated by `;`. Words are stemmed when they are read (`search.stem`).
"""

from __future__ import annotations

# The verbs tool names are made with (`list_issues`, `create_issue`), as one word each
NAME_VERBS = set(
    "get list create update delete remove add set search find read write run start stop edit move fetch show "
    "describe merge close open new make check request submit cancel assign unassign approve reject enable disable "
    "upload download send post put patch query lookup view watch unwatch star unstar fork copy rename archive "
    "restore reopen lock unlock resolve dismiss rerun retry mark manage execute invoke call load save export import "
    "sync publish subscribe unsubscribe follow unfollow pin unpin tag untag label unlabel comment reply react "
    "upsert insert replace clear reset refresh build deploy trigger schedule generate convert parse validate "
    "count batch bulk acknowledge inspect invite mute unmute test scan apply plan destroy scale restart "
    "rollback explain translate navigate click fill toggle purge".split()
)

# Words that say nothing about which command is meant ("show me", "can you", "I want to", "what's"): the classic
# English stop words (NLTK's list) but those that can (all, down, off, after, before, under), and everyday fillers.
STOP = set(
    """
a an the to of for in on at by with from and or as into onto via than then so if but not no
my our your their its me i we you us it they them he she this that these those there here
is are was were be been am do does did done can could would should will shall may might must
please kindly just also really maybe want wanted need needs like let lets help try
how what which who whom whose when where why some any each about over up out
has have had got show s t d ll re ve m
myself ours ourselves yours yourself yourselves him his himself her hers herself itself theirs themselves
being having doing because while until during through between against above below again further once now
both few more most other such only own same too very nor don
""".split()
)

# Words that start a question, which has no leading verb ("what's open?" asks for open things, not to open one).
QUESTION = set("what which who whose where when how why".split())

# Words after which a query says what to write rather than which command ("file a bug about the login page").
CONTENT = set("about saying says said titled called named regarding re that".split())
# ... until one of these names where it goes ("add a note about the outage *to* the incident").
DESTINATION = set("to into onto".split())

# Several words that mean one thing, read as that one word before anything else.
PHRASES = """
who am i: whoami; kick off: start; spin up: start; fire off: start; set up: create; sign in: login;
log in: login; log into: login; sign out: logout; log out: logout; shut down: stop; tear down: delete;
roll back: rollback; look up: lookup; follow up: comment
"""

# Operations and the verbs that ask for them. A query's leading verb stands for its operations, and so does
# the verb in a command's name, so that "file a bug" meets `create-issue` but not `get-file`.
VERBS = """
create: create add make open file submit raise register post write insert generate compose draft comment reply
        annotate note;
get: get fetch retrieve read show view display see check inspect describe detail open;
list: list show view browse enumerate display;
search: search find query lookup look locate grep seek filter ask discover;
update: update edit change modify rename set patch adjust configure upsert;
delete: delete remove erase drop destroy purge discard unlink uninstall clear;
close: close resolve shut finish complete dismiss;
reopen: reopen restore unarchive;
approve: approve accept confirm allow grant lgtm;
reject: reject decline deny refuse;
start: start run kick trigger launch execute begin invoke fire rerun;
stop: stop cancel halt kill abort pause terminate suspend;
restart: restart reboot reload relaunch rerun;
send: send post message notify tell announce share publish email mail broadcast dm ping;
comment: comment reply annotate respond;
assign: assign delegate reassign allocate;
merge: merge combine land;
deploy: deploy release ship rollout promote publish;
upload: upload attach push;
download: download export save;
silence: silence mute snooze acknowledge ack;
login: login signin authenticate logon;
logout: logout signout;
subscribe: subscribe follow watch star;
schedule: schedule book plan;
test: test scan verify validate audit;
copy: copy duplicate clone fork;
move: move transfer relocate;
rollback: rollback revert undo;
label: label tag categorize;
archive: archive hide;
compare: compare diff;
convert: convert transform translate;
monitor: monitor track
"""

# Other words and what they also mean, weighed a little less than the word itself.
SYNONYMS = """
pr: pull request; prs: pull request; mr: merge request;
repo: repository; repos: repository; bug: issue; ticket: issue;
defect: issue; problem: issue error; task: issue todo; todo: task; story: issue; epic: issue;
msg: message; dm: direct message; chat: message conversation; note: comment; reply: comment; comment: note reply;
db: database; table: database; dir: directory folder; folder: directory; doc: document; docs: document;
document: file page; config: configuration setting; setting: configuration;
user: member people account; member: user; people: user; person: user contact; teammate: user member;
contact: person; account: user profile; profile: user; whoami: me current user profile account;
new: create; recent: latest; latest: recent; ci: workflow run pipeline; pipeline: workflow run;
job: workflow run; build: workflow run; deployment: deploy; release: tag version; version: release;
email: mail message; mail: email message; inbox: email; calendar: event; meeting: event calendar;
appointment: event; event: meeting; session: login connection; log: event; logs: log; error: log exception;
dashboard: report chart; metric: report measurement; chart: graph dashboard; graph: chart dashboard;
sheet: spreadsheet; spreadsheet: sheet; row: record; record: row; card: task; board: project;
project: board; drive: file; payment: charge invoice; invoice: payment bill; bill: invoice;
customer: client user; client: customer; order: purchase; price: cost; cost: price; spend: cost billing;
billing: cost invoice; weather: forecast; forecast: weather; map: location; place: location;
location: address; address: location; time: date; date: time; clock: time; song: track music;
track: song; info: detail; detail: info; status: state; state: status; count: number;
access: permission role group; permission: access role; role: permission group; cve: vulnerability security;
vuln: vulnerability; vulnerability: security cve; security: vulnerability; documentation: document page wiki;
wiki: page document; infrastructure: instance server cloud resource; server: instance host;
host: server instance; vm: instance server; monitoring: monitor alert metric; alert: monitor notification alarm;
alarm: alert monitor; firing: alert triggered active; incident: alert outage; outage: incident;
oncall: on call schedule; secret: credential key; credential: secret key; key: secret token;
token: key credential; container: docker pod; pod: container; cluster: kubernetes k8s;
k8s: kubernetes cluster; kubernetes: k8s cluster; image: picture photo; photo: image; picture: image;
img: image; pic: image; branch: ref; commit: change revision; diff: change; channel: conversation;
thread: conversation reply; question: answer query; org: organization; organization: org team company;
team: group member; group: team; ns: namespace; namespace: ns; workspace: project; sql: query database;
query: sql search; schema: table structure; endpoint: api url route; url: link address; link: url;
webhook: hook callback; notification: alert message; label: tag; tag: label release; milestone: sprint;
sprint: iteration cycle milestone; cycle: sprint; assignee: owner user; owner: user assignee;
description: body text; body: content text; text: content message; title: name subject; subject: title;
history: log activity timeline; activity: event history; audit: log history; usage: metric consumption;
cpu: metric usage; memory: metric usage; latency: metric performance; performance: metric latency;
health: status; uptime: status availability; service: application app; app: application service;
env: environment; staging: environment; production: environment prod; prod: production;
queue: job task; storage: bucket disk file; bucket: storage; backup: snapshot; snapshot: backup;
network: vpc subnet; dns: domain record; domain: dns; certificate: cert ssl tls; cert: certificate;
emoji: reaction; reaction: emoji; failure: error; crash: error incident; broken: error failure;
all: list; every: list; down: outage incident; attachment: file; content: text body; changelog: release; session: login;
review: pull request; feedback: comment review; fix: repair remediation patch solution
"""


def table(text: str) -> dict[str, list[str]]:
    """`word: w1 w2; ...` rows -> {word: [w1, w2, ...]}."""
    rows = (row.partition(":") for row in text.replace("\n", " ").split(";"))
    return {key.strip(): value.split() for key, _, value in rows if key.strip()}


def words() -> set[str]:
    """Every word of the tables above, as written: the general vocabulary, which is never read as a typo."""
    found = NAME_VERBS | STOP | QUESTION | CONTENT | DESTINATION
    for text in (PHRASES, VERBS, SYNONYMS):
        for key, expansion in table(text).items():
            found |= {*key.split(), *expansion}
    return found
