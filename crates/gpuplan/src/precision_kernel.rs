//! A precision as users write it, with the kernel that runs quantised weights after a colon
//! (`int4:awq-gemm`, `int8:bnb-int8`) or in one word (`nf4`): how fast a 4-bit checkpoint
//! decodes depends on the kernel as much as on its bytes.

use crate::{Error, Field, RequestError};
use gpuplan_model::{Precision, Task, WeightKernel};

/// `int4`, `int4:marlin`, `nf4` → the precision and the kernel named, if any.
pub(crate) fn parse(text: &str) -> Result<(Precision, Option<WeightKernel>), Error> {
    let folded = text.trim().to_lowercase();
    if folded == "nf4" {
        return Ok((Precision::Int4, Some(WeightKernel::BnbNf4)));
    }
    let (precision, kernel) = match folded.split_once(':') {
        Some((precision, kernel)) => (precision, Some(kernel)),
        None => (folded.as_str(), None),
    };
    let precision: Precision = precision
        .parse()
        .map_err(|e: gpuplan_model::UnknownPrecision| RequestError::invalid(Field::Precision, "", e.to_string()))?;
    let Some(kernel) = kernel else {
        return Ok((precision, None));
    };
    let kernel: WeightKernel =
        kernel.parse().map_err(|e: String| {
            Error::from(RequestError::invalid(Field::Precision, text, e).with_hint(
                "after the colon, the kernel that runs the quantised weights, e.g. int4:marlin or int4:bnb-nf4",
            ))
        })?;
    let serves = kernel.precisions();
    let fits = if serves.is_empty() {
        precision != Precision::Int4
    } else {
        serves.contains(&precision)
    };
    if !fits {
        return Err(RequestError::invalid(
            Field::Precision,
            text,
            format!("the {kernel} kernel does not run {precision} weights"),
        )
        .with_hint("int4 runs on marlin, awq-gemm, exllamav2 or bnb-nf4; int8 on native (W8A8), marlin or bnb-int8")
        .into());
    }
    Ok((precision, Some(kernel)))
}

/// A kernel only means something to inference: training quantises its own way (QLoRA).
pub(crate) fn check_task(kernel: Option<WeightKernel>, task: Task) -> Result<(), Error> {
    match kernel {
        Some(kernel) if task != Task::Inference => Err(RequestError::unsuitable(
            Field::Precision,
            format!("…:{kernel}"),
            format!("names an inference kernel; {task} does not run one"),
        )
        .with_hint("drop the kernel; {task} qlora trains on NF4 weights by itself")
        .into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precisions_take_a_kernel_after_a_colon() {
        assert_eq!(parse("int4").unwrap(), (Precision::Int4, None));
        assert_eq!(parse("NF4").unwrap(), (Precision::Int4, Some(WeightKernel::BnbNf4)));
        assert_eq!(
            parse("int4:awq-gemm").unwrap(),
            (Precision::Int4, Some(WeightKernel::AwqGemm))
        );
        assert_eq!(
            parse("int8:llm.int8").unwrap(),
            (Precision::Int8, Some(WeightKernel::BnbInt8))
        );
        assert_eq!(
            parse("int8:smoothquant").unwrap(),
            (Precision::Int8, Some(WeightKernel::Native))
        );
        assert!(parse("int8:bnb-nf4").is_err());
        assert!(parse("int4:native").is_err());
        assert!(parse("int4:turbo").is_err());
        assert!(check_task(Some(WeightKernel::Marlin), Task::Lora).is_err());
        assert!(check_task(None, Task::Lora).is_ok());
    }
}
