//! The repository capabilities: what is indexed, index jobs, and reports.

use ken_engine::{Engine, IndexJob, Principal, RepoStatus, Report as Doc, ReportRequest, Result};

use super::Call;
use crate::wire;

/// What is indexed: each repository with its commit, counts and coverage.
pub struct Status {
    /// Only these (empty: all the caller may read).
    pub repos: Vec<String>,
}

impl Call for Status {
    type Answer = Vec<RepoStatus>;
    type Wire = wire::Repos;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Vec<RepoStatus>> {
        engine.status(&self.repos, &who.access)
    }

    fn wire(&self, all: &Vec<RepoStatus>, who: &Principal) -> wire::Repos {
        wire::Repos {
            repos: all.iter().map(|r| wire::Repo::for_caller(r, who)).collect(),
        }
    }
}

/// Queue a job that indexes a repository (scope `index`).
pub struct Enqueue {
    pub job: IndexJob,
}

impl Call for Enqueue {
    type Answer = (ken_engine::Job, bool);
    type Wire = wire::Queued;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Self::Answer> {
        engine.enqueue_index(self.job.clone(), who)
    }

    fn wire(&self, (job, new): &Self::Answer, _: &Principal) -> wire::Queued {
        wire::Queued {
            job: job.id.clone(),
            new: *new,
            status: wire::Job::from(job),
        }
    }
}

/// The newest index jobs.
pub struct Jobs {
    pub n: usize,
}

impl Call for Jobs {
    type Answer = Vec<ken_engine::Job>;
    type Wire = wire::Jobs;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Self::Answer> {
        engine.jobs(self.n, &who.access)
    }

    fn wire(&self, jobs: &Self::Answer, _: &Principal) -> wire::Jobs {
        wire::Jobs {
            jobs: jobs.iter().map(wire::Job::from).collect(),
        }
    }
}

/// One index job.
pub struct Job {
    pub id: String,
}

impl Call for Job {
    type Answer = ken_engine::Job;
    type Wire = wire::Job;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<ken_engine::Job> {
        engine.job(&self.id, &who.access)
    }

    fn wire(&self, j: &ken_engine::Job, _: &Principal) -> wire::Job {
        wire::Job::from(j)
    }
}

/// A report over a period of one repository. Its JSON is the engine's own
/// (docs/report.md); Markdown and HTML are renderings of it.
pub struct Report {
    pub req: ReportRequest,
}

impl Call for Report {
    type Answer = Doc;
    type Wire = Doc;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Doc> {
        engine.report(&self.req, &who.access)
    }

    fn wire(&self, doc: &Doc, _: &Principal) -> Doc {
        doc.clone()
    }
}
