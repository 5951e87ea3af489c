//! The benchmark harness and its backends. (On branch `cuda` this file only declares the CUDA
//! backend; branch `bench` owns the rest of the module.)

pub mod cuda;
