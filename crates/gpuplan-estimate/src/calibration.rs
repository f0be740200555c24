//! The fitted constants the estimators read: those of the catalog a request runs against,
//! handed over for the span of the request ([`in_force`]), or the catalog's built-in ones when
//! none are (the estimators' own tests, callers outside a catalog). The data and its types are
//! the catalog's (`gpuplan-catalog/data/calibration.toml`, [`gpuplan_model::fitted`]); each
//! constant carries its evidence and the validation cases it was set from.

use gpuplan_model::Framework;
pub use gpuplan_model::fitted::{
    ArchitectureFraction, Calibration, Constant, Constants, DiffusionFraction, DiffusionPeakFraction, FrameworkProfile,
    OperatorTime, TrainingPeakFraction,
};
use std::cell::Cell;
use std::sync::LazyLock;

/// The built-in data, for estimates made outside any catalog's scope.
pub const CALIBRATION_TOML: &str = include_str!("../../gpuplan-catalog/data/calibration.toml");

static BUILTIN: LazyLock<Calibration> = LazyLock::new(|| {
    toml::from_str(CALIBRATION_TOML).expect("the built-in calibration data parses (a unit test checks it)")
});

thread_local! {
    /// The fitted constants of the request this thread is running, if any.
    static IN_FORCE: Cell<Option<&'static Calibration>> = const { Cell::new(None) };
}

/// Runs `work` with `calibration` as the fitted constants every estimator on this thread reads,
/// then restores the ones before (also when `work` unwinds).
pub fn in_force<R>(calibration: &'static Calibration, work: impl FnOnce() -> R) -> R {
    struct Restore(Option<&'static Calibration>);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_FORCE.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(IN_FORCE.with(|cell| cell.replace(Some(calibration))));
    work()
}

/// The fitted constants in force.
pub fn calibration() -> &'static Calibration {
    IN_FORCE.with(Cell::get).unwrap_or_else(|| &BUILTIN)
}

/// The scalar constants in force.
pub fn constants() -> &'static Constants {
    &calibration().constants
}

/// The profile of `framework`.
pub fn framework(framework: Framework) -> &'static FrameworkProfile {
    calibration().framework(framework)
}

/// Every validation case some constant in force was set from: the in-sample cases.
pub fn calibrated_cases() -> std::collections::BTreeSet<&'static str> {
    calibration().calibrated_cases()
}

/// Bytes per logit the training loss keeps alive under `framework`.
pub fn logit_bytes(framework: Option<Framework>) -> f64 {
    framework.map_or(calibration().generic_logit_bytes, |f| self::framework(f).logit_bytes)
}

/// One typed accessor per scalar constant, reading the constants in force.
macro_rules! accessors {
    ($($name:ident: $ty:ty),+ $(,)?) => {
        /// The value of each scalar constant in force, in the type the estimators use.
        pub mod accessors {
            $(
                pub fn $name() -> $ty {
                    super::constants().$name.value as $ty
                }
            )+
        }
    };
}

gpuplan_model::for_each_scalar_constant!(accessors);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_data_parses_and_checks() {
        let parsed: Calibration = toml::from_str(CALIBRATION_TOML).expect("parses");
        parsed.check().expect("every profile, fractions that are fractions");
        assert!(!parsed.calibrated_cases().is_empty());
        for framework in Framework::ALL {
            let profile = parsed.framework(*framework);
            assert!(!profile.checkpointing.is_empty() && !profile.zero_stages.is_empty());
            assert!(profile.zero_stages.iter().all(|z| *z <= 3));
            assert!(profile.logit_bytes >= 0.0 && profile.low_precision_factor > 0.0);
        }
        for kernel in gpuplan_model::WeightKernel::ALL {
            let profile = parsed.weight_kernel(*kernel);
            assert!(profile.weight_time_factor_batch1 > 0.0 && profile.weight_time_factor > 0.0);
            assert!(profile.gemm_factor > 0.0 && profile.gemm_factor <= 1.0);
        }
    }

    #[test]
    fn a_check_finds_what_parsing_cannot() {
        let mut missing: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        missing.engines.remove("vllm");
        assert!(
            missing
                .check()
                .unwrap_err()
                .to_string()
                .contains("no engine profile for `vllm`")
        );
        let mut stray: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        let vllm = stray.engines["vllm"].clone();
        stray.engines.insert("vlm".to_string(), vllm);
        assert!(
            stray
                .check()
                .unwrap_err()
                .to_string()
                .contains("`vlm`, which is not one")
        );
        let mut wide: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        wide.engines.get_mut("vllm").unwrap().decode_bandwidth_fraction = 1.3;
        assert!(wide.check().unwrap_err().to_string().contains("not a fraction"));
        let mut sharp: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        sharp.constants.serving_roofline_knee.value = 0.5;
        assert!(
            sharp
                .check()
                .unwrap_err()
                .to_string()
                .contains("serving_roofline_knee is 0.5; it must be at least 1")
        );
        let mut cdna: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        let entry = cdna
            .training_peak_fraction
            .architectures
            .iter_mut()
            .find(|a| a.serving.is_some())
            .unwrap();
        entry.serving = Some(0.0);
        assert!(
            cdna.check()
                .unwrap_err()
                .to_string()
                .contains("serving is 0; it must be above 0")
        );
        let mut b300: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        let entry = b300
            .training_peak_fraction
            .architectures
            .iter_mut()
            .find(|a| a.serving_four_bit.is_some())
            .unwrap();
        entry.serving_four_bit = Some(f64::NAN);
        assert!(
            b300.check()
                .unwrap_err()
                .to_string()
                .contains("serving_four_bit is NaN; it must be above 0")
        );
    }

    #[test]
    fn constants_in_force_are_the_scope_s_and_the_built_in_ones_after() {
        let mut other: Calibration = toml::from_str(CALIBRATION_TOML).unwrap();
        other.constants.cuda_context_gib.value = 9.0;
        let other: &'static Calibration = Box::leak(Box::new(other));
        let before = accessors::cuda_context_gib();
        let inside = in_force(other, accessors::cuda_context_gib);
        assert_eq!(inside, 9.0);
        assert_eq!(accessors::cuda_context_gib(), before);
        assert!(std::panic::catch_unwind(|| in_force(other, || panic!("unwinds"))).is_err());
        assert_eq!(accessors::cuda_context_gib(), before, "restored after unwinding");
    }

    #[test]
    fn serving_evidence_states_the_values_in_force() {
        for profile in calibration().engines.values() {
            if let Some(serving) = &profile.serving {
                let ms = if serving.seconds_per_layer > 0.0 {
                    format!("{} µs per layer", (serving.seconds_per_layer * 1e6).round())
                } else {
                    format!("{} ms fixed", serving.step_seconds * 1e3)
                };
                let percent = format!("{} % of peak", (serving.gemm_peak_fraction * 100.0).round());
                assert!(
                    serving.evidence.contains(&ms) && serving.evidence.contains(&percent),
                    "{}: {ms}, {percent}",
                    serving.evidence
                );
            }
        }
    }
}
