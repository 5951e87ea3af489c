//! Evidence: the packed evidence file of a run and its checks (`verify`: the uploaded artifact's REST
//! digest equals the local file's digest and the upload action's output).

pub mod verify;
