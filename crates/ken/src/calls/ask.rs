//! An answer with checked citations.

use ken_engine::{AskObserver, AskRequest, AskResponse, Engine, Principal, Quiet, Result};

use super::Call;
use crate::wire;

pub struct Ask {
    pub req: AskRequest,
}

impl Ask {
    /// Answer, telling `observer` each step and each piece of text as it
    /// comes (the command line prints them, the API streams them).
    pub fn observed(
        &self,
        engine: &Engine,
        who: &Principal,
        observer: &mut dyn AskObserver,
    ) -> Result<AskResponse> {
        engine.ask(&self.req, &who.access, observer)
    }
}

impl Call for Ask {
    type Answer = AskResponse;
    type Wire = wire::Ask;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<AskResponse> {
        self.observed(engine, who, &mut Quiet)
    }

    fn wire(&self, r: &AskResponse, _: &Principal) -> wire::Ask {
        wire::Ask::from(r)
    }

    fn waits(&self) -> bool {
        true
    }
}
