//! The same model through `candle_transformers::models::bert::BertModel`:
//! padded batches with an attention mask, candle's own ops. Kept as a second
//! implementation to cross-check the fused encoder and to measure it against
//! (`LocalOptions::backend = Backend::Candle`).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::bert::Pooling;
use crate::error::{EmbedError, Result};

pub struct CandleBert {
    model: BertModel,
}

impl CandleBert {
    pub fn load(dir: &Path) -> Result<CandleBert> {
        let cfg_path = dir.join("config.json");
        let text = std::fs::read_to_string(&cfg_path).map_err(|e| EmbedError::io(&cfg_path, e))?;
        let cfg: Config = serde_json::from_str(&text)
            .map_err(|e| EmbedError::BadConfig(format!("{}: {e}", cfg_path.display())))?;
        let weights = dir.join("model.safetensors");
        // SAFETY: the file is memory-mapped read-only; we do not modify it while loaded.
        let vb =
            unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DType::F32, &Device::Cpu)? };
        Ok(CandleBert {
            model: BertModel::load(vb, &cfg)?,
        })
    }

    /// Pooled, unnormalised vectors of a batch (padded to its longest sequence).
    pub fn embed(&self, seqs: &[&[u32]], pooling: Pooling) -> Result<Vec<Vec<f32>>> {
        let b = seqs.len();
        let len = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut ids = vec![0u32; b * len];
        let mut mask = vec![0u32; b * len];
        for (i, s) in seqs.iter().enumerate() {
            ids[i * len..i * len + s.len()].copy_from_slice(s);
            mask[i * len..i * len + s.len()].fill(1);
        }
        let dev = Device::Cpu;
        let ids = Tensor::from_vec(ids, (b, len), &dev)?;
        let mask = Tensor::from_vec(mask, (b, len), &dev)?;
        let types = ids.zeros_like()?;
        let out = self.model.forward(&ids, &types, Some(&mask))?; // b × len × hidden
        let pooled = match pooling {
            Pooling::Cls => out.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean => {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = out.broadcast_mul(&m)?.sum(1)?;
                sum.broadcast_div(&m.sum(1)?)?
            }
        };
        Ok(pooled.to_vec2::<f32>()?)
    }
}
