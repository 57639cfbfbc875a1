use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

fn small_config() -> DqnConfig {
    DqnConfig {
        hidden: vec![64],
        head_hidden: 64,
        ..DqnConfig::default()
    }
}

fn observation(rng: &mut ChaCha8Rng) -> Vec<f32> {
    (0..13).map(|_| rng.random::<f32>()).collect()
}

/// Contextual bandit: action `a` pays `obs[a] - obs[4 + a]`; a random policy earns 0 on
/// average, the best one about 0.4.
fn bandit_reward(obs: &[f32], action: usize) -> f32 {
    obs[action] - obs[4 + action]
}

#[test]
fn epsilon_schedule_of_the_paper() {
    let config = DqnConfig::default();
    for (decisions, eps) in [
        (0, 1.0),
        (5_000, 0.55),
        (10_000, 0.1),
        (50_000, 0.1),
        (99_999, 0.1),
        (100_000, 0.02),
        (200_000, 0.02),
    ] {
        let got = config.epsilon(decisions);
        assert!((got - eps).abs() < 1e-12, "{decisions}: {got} vs {eps}");
    }
}

#[test]
fn act_counts_decisions_and_explores_at_the_scheduled_rate() {
    let config = DqnConfig {
        epsilon_anneal: 1_000,
        epsilon_mid: 0.2,
        epsilon_mid_until: 1_000,
        epsilon_final: 0.2,
        ..small_config()
    };
    let mut agent = DqnAgent::new(config, 13, 4, 1).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let obs = observation(&mut rng);
    let mut explored = [0usize; 2];
    for d in 0..4_000 {
        assert!((agent.epsilon() - agent.config().epsilon(d)).abs() < 1e-12);
        let (action, greedy) = agent.act(&obs, &mut rng);
        assert!(action < 4);
        explored[usize::from(d >= 1_000)] += usize::from(!greedy);
        if greedy {
            assert_eq!(action, agent.greedy(&obs));
        }
    }
    assert_eq!(agent.decisions(), 4_000);
    // Mean epsilon 0.6 over the first 1,000 decisions, then 0.2.
    assert!(
        (explored[0] as f64 / 1_000.0 - 0.6).abs() < 0.05,
        "{explored:?}"
    );
    assert!(
        (explored[1] as f64 / 3_000.0 - 0.2).abs() < 0.03,
        "{explored:?}"
    );
}

#[test]
fn replay_wraps_at_capacity_and_keeps_the_newest() {
    let mut replay = ReplayBuffer::new(3, 2);
    for i in 0..5 {
        let obs = [i as f32, 0.5];
        let next = [i as f32 + 1.0, 0.5];
        replay.push(Transition {
            obs: &obs,
            action: i % 2,
            reward: i as f32,
            next_obs: (i % 2 == 0).then_some(&next[..]),
        });
        assert_eq!(replay.len(), (i + 1).min(3));
    }
    let kept: Vec<f32> = (0..3).map(|i| replay.get(i).reward).collect();
    assert_eq!(kept, [2.0, 3.0, 4.0]);
    let third = replay.get(1);
    assert_eq!(third.obs, [3.0, 0.5]);
    assert_eq!(third.next_obs, None);
    assert_eq!(replay.get(2).next_obs, Some(&[5.0, 0.5][..]));
    // Sampling only ever returns stored transitions.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut batch = Batch::default();
    replay.sample(200, &mut rng, &mut batch);
    assert_eq!(batch.rows(), 200);
    for r in 2..5 {
        assert!(
            batch.rewards.contains(&(r as f32)),
            "reward {r} never sampled"
        );
    }
    assert!(batch.rewards.iter().all(|&r| r >= 2.0));
    for (b, &r) in batch.rewards.iter().enumerate() {
        assert_eq!(batch.obs[2 * b], r);
        assert_eq!(batch.terminal[b], r == 3.0);
    }
}

#[test]
fn double_q_target_evaluates_the_online_choice_with_the_target_network() {
    let online = [0.1, 0.9, 0.3, 0.2];
    let target = [5.0, 1.0, 0.0, -1.0];
    // Online prefers action 1; the target's own maximum (action 0) must not be used.
    assert_eq!(double_q_target(0.5, 0.5, &online, &target), 0.5 + 0.5 * 1.0);
    assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
}

#[test]
fn training_runs_once_per_train_every_decisions_after_learning_starts() {
    let mut agent = DqnAgent::new(small_config(), 13, 4, 4).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for d in 1..=1_100u64 {
        let obs = observation(&mut rng);
        let (action, _) = agent.act(&obs, &mut rng);
        let loss = agent.remember(Transition {
            obs: &obs,
            action,
            reward: bandit_reward(&obs, action),
            next_obs: None,
        });
        let expected = if d < 1_000 { 0 } else { (d - 1_000) / 4 + 1 };
        assert_eq!(agent.training_steps(), expected, "after {d} decisions");
        assert_eq!(loss.is_some(), d >= 1_000 && d % 4 == 0);
    }
    // Rewards that arrive late: the owed steps run when they do.
    let pending: Vec<(Vec<f32>, usize)> = (0..40)
        .map(|_| {
            let obs = observation(&mut rng);
            let (action, _) = agent.act(&obs, &mut rng);
            (obs, action)
        })
        .collect();
    assert_eq!(agent.training_steps(), 26);
    let (obs, action) = &pending[0];
    agent.remember(Transition {
        obs,
        action: *action,
        reward: 0.0,
        next_obs: None,
    });
    assert_eq!(agent.training_steps(), 36);
}

#[test]
fn target_network_is_synced_every_target_update_every_decisions() {
    let config = DqnConfig {
        discount: 0.9,
        learning_starts: 10,
        target_update_every: 50,
        ..small_config()
    };
    let mut agent = DqnAgent::new(config, 13, 4, 6).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut obs = observation(&mut rng);
    // The target equals the online network exactly until the first training step after a
    // sync.
    let mut steps_at_sync = 0;
    for d in 1..=120u64 {
        let (action, _) = agent.act(&obs, &mut rng);
        let next = observation(&mut rng);
        if d % 50 == 0 {
            assert_eq!(
                agent.target().params(),
                agent.online().params(),
                "sync at {d}"
            );
            steps_at_sync = agent.training_steps();
        }
        agent.remember(Transition {
            obs: &obs,
            action,
            reward: bandit_reward(&obs, action),
            next_obs: Some(&next),
        });
        let trained = agent.training_steps() > steps_at_sync;
        assert_eq!(
            agent.target().params() != agent.online().params(),
            trained,
            "{d}"
        );
        obs = next;
    }
}

#[test]
fn greedy_policy_beats_random_on_a_contextual_bandit() {
    let config = DqnConfig {
        lr: 1e-3,
        ..small_config()
    };
    let mut agent = DqnAgent::new(config, 13, 4, 8).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..8_000 {
        let obs = observation(&mut rng);
        let (action, _) = agent.act(&obs, &mut rng);
        agent.remember(Transition {
            obs: &obs,
            action,
            reward: bandit_reward(&obs, action),
            next_obs: None,
        });
    }
    assert_eq!(agent.training_steps(), 1_751);
    let (mut greedy, mut random, mut best) = (0.0, 0.0, 0.0);
    let n = 2_000;
    for _ in 0..n {
        let obs = observation(&mut rng);
        greedy += bandit_reward(&obs, agent.greedy(&obs));
        random += bandit_reward(&obs, rng.random_range(0..4));
        best += (0..4)
            .map(|a| bandit_reward(&obs, a))
            .fold(f32::MIN, f32::max);
    }
    let (greedy, random, best) = (greedy / n as f32, random / n as f32, best / n as f32);
    assert!(random.abs() < 0.05, "random {random}");
    assert!(
        greedy > random + 0.3 && greedy > 0.85 * best,
        "greedy {greedy}, random {random}, best {best}"
    );
}

#[test]
fn same_seed_same_agent() {
    let run = || {
        let mut agent = DqnAgent::new(small_config(), 13, 4, 10).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..1_200 {
            let obs = observation(&mut rng);
            let (action, _) = agent.act(&obs, &mut rng);
            agent.remember(Transition {
                obs: &obs,
                action,
                reward: bandit_reward(&obs, action),
                next_obs: None,
            });
        }
        agent.online().params().to_vec()
    };
    assert_eq!(run(), run());
}

#[test]
fn config_defaults_and_unknown_fields() {
    let parsed: DqnConfig = toml::from_str("").unwrap();
    assert_eq!(parsed, DqnConfig::default());
    let fast: DqnConfig =
        toml::from_str("hidden = [64]\nloss = \"mse\"\ninit = \"he_uniform\"").unwrap();
    assert_eq!(fast.hidden, [64]);
    assert_eq!(fast.loss, crate::learn::nn::Loss::Mse);
    assert_eq!(fast.init, crate::learn::nn::Init::HeUniform);
    assert_eq!(fast.replay_capacity, 50_000);
    assert!(toml::from_str::<DqnConfig>("batchsize = 32").is_err());
    let bad = DqnConfig {
        train_every: 0,
        ..DqnConfig::default()
    };
    let err = bad.validate("routing.dqn").unwrap_err().to_string();
    assert!(err.contains("routing.dqn.train_every"), "{err}");
    assert!(DqnAgent::new(bad, 13, 4, 0).is_err());
}
