//! Runs `validation-bench` built for wasm32-wasip2 (a WASI command) in wasmtime, with the same
//! engine settings the host uses, so its timings compare with the native build's.

use std::path::Path;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::bindings::sync::Command;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

struct State {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

pub fn run(wasm: &Path, iterations: &str) -> anyhow::Result<()> {
    let engine = Engine::default();
    let component = Component::from_file(&engine, wasm)?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    let wasi = WasiCtx::builder()
        .inherit_stdout()
        .inherit_stderr()
        .args(&["validation-bench", iterations])
        .build();
    let mut store = Store::new(
        &engine,
        State {
            wasi,
            table: ResourceTable::new(),
        },
    );
    let command = Command::instantiate(&mut store, &component, &linker)?;
    command
        .wasi_cli_run()
        .call_run(&mut store)?
        .map_err(|()| anyhow::anyhow!("validation-bench failed in wasm"))
}
