//! The people capabilities: who knows a topic, everyone in the history,
//! commits by words, one person, and who last changed each line of a file.

use ken_engine::{Engine, FileBlame, LogHit, LogSearchRequest, PersonSummary, PersonView};
use ken_engine::{Principal, Result, WhoResponse};

use super::Call;
use crate::wire;

/// People who know the code a topic, path or symbol names.
pub struct Who {
    pub query: String,
    pub repos: Vec<String>,
    pub n: usize,
}

impl Call for Who {
    type Answer = WhoResponse;
    type Wire = wire::Who;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<WhoResponse> {
        engine.who(&self.query, &self.repos, self.n, &who.access)
    }

    fn wire(&self, r: &WhoResponse, _: &Principal) -> wire::Who {
        wire::Who::from(r)
    }
}

/// People seen in the history, with every alias.
pub struct People {
    pub repos: Vec<String>,
    pub bots: bool,
}

impl Call for People {
    type Answer = Vec<(String, PersonSummary)>;
    type Wire = wire::People;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Self::Answer> {
        engine.people(&self.repos, self.bots, &who.access)
    }

    fn wire(&self, all: &Self::Answer, _: &Principal) -> wire::People {
        wire::People::from_engine(all)
    }
}

/// Commits by words in their messages and changed paths.
pub struct LogSearch {
    /// Empty: the newest commits.
    pub query: String,
    pub repos: Vec<String>,
    pub n: usize,
    pub author: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

impl Call for LogSearch {
    type Answer = Vec<LogHit>;
    type Wire = wire::LogSearch;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Vec<LogHit>> {
        let req = LogSearchRequest::parse(
            &self.query,
            self.repos.clone(),
            self.n,
            self.author.clone(),
            self.since.as_deref(),
            self.until.as_deref(),
            ken_engine::now(),
        )?;
        engine.log_search(&req, &who.access)
    }

    fn wire(&self, hits: &Vec<LogHit>, _: &Principal) -> wire::LogSearch {
        wire::LogSearch::from_engine(&self.query, hits)
    }
}

/// One person: aliases, the directories they own most, recent commits.
pub struct Person {
    /// An id, name, email or handle.
    pub id: String,
    pub repo: Option<String>,
}

impl Call for Person {
    type Answer = PersonView;
    type Wire = wire::PersonPage;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<PersonView> {
        engine.person(&self.id, self.repo.as_deref(), &who.access)
    }

    fn wire(&self, v: &PersonView, _: &Principal) -> wire::PersonPage {
        wire::PersonPage::from(v)
    }
}

/// Who last changed each range of a file at the indexed commit.
pub struct Blame {
    pub repo: String,
    pub path: String,
}

impl Call for Blame {
    type Answer = FileBlame;
    type Wire = wire::Blame;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<FileBlame> {
        engine.blame(&self.repo, &self.path, &who.access)
    }

    fn wire(&self, b: &FileBlame, _: &Principal) -> wire::Blame {
        wire::Blame::from(b)
    }
}
