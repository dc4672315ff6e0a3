//! A scripted `Api` for unit tests: answers are queued per (method, path prefix).
use super::*;
use std::cell::RefCell;

#[derive(Default)]
pub struct ScriptedApi {
    answers: RefCell<Vec<(Method, String, Result<Value>)>>,
    pub calls: RefCell<Vec<(Method, String, Form)>>,
    /// What the waiter records about tasks (the scripted answers record no writes).
    pub journal: WriteJournal,
}

impl ScriptedApi {
    pub fn answer(&self, method: Method, path: &str, result: Result<Value>) -> &Self {
        self.answers.borrow_mut().push((method, path.to_string(), result));
        self
    }
}

impl Api for ScriptedApi {
    fn call(&self, method: Method, path: &ApiPath, params: &Form) -> Result<Value> {
        path.check()?;
        let path = path.encoded();
        self.calls.borrow_mut().push((method, path.clone(), params.clone()));
        let mut answers = self.answers.borrow_mut();
        let idx = answers
            .iter()
            .position(|(m, p, _)| *m == method && path.starts_with(p.as_str()))
            .ok_or_else(|| Error::Internal(format!("unscripted call {} {path}", method.as_str())))?;
        answers.remove(idx).2
    }

    fn journal(&self) -> Option<&WriteJournal> {
        Some(&self.journal)
    }
}
